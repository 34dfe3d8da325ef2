/**
 * What cohent.mjs's loader (loader.ts) hands to the bundle it compiles
 * through vm.Script: the hook payload it already read, and its own
 * import(). Code compiled from a V8 code cache has no dynamic import of its
 * own in Node 20 ("A dynamic import callback was not specified"), and the
 * vm option for one is experimental and warns on stderr. Absent when the
 * sources run unbundled.
 */
export interface LoaderHandoff {
  stdin?: string;
  import(url: string): Promise<unknown>;
  /** Set by the in-process API (OpenCode's plugin): main.ts only exports its hook, and runs no CLI. */
  inProcess?: boolean;
  /** The build's stamps (cohent.cjs, cohent-core.js) when this code was read: set for the MCP server (build-check.ts). */
  stamps?: readonly string[];
}

export function loaderHandoff(): LoaderHandoff | undefined {
  return (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader;
}

export { fileUrlOf, pathOfFileUrl } from "@cohent/client";
