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
  /** In the guard's part (hook-guard-main.ts): runs the whole adapter on the same call. */
  whole?: () => void;
}

export function loaderHandoff(): LoaderHandoff | undefined {
  return (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader;
}

/** An absolute path of letters, digits and ._- (no empty, . or .. segment): its own URL after file://. */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._-]+)+$/;

/**
 * A file's URL, as pathToFileURL would answer. A plain path (PLAIN_PATH) is
 * its own URL after file://, without pathToFileURL's ~0.4 ms of encoding and
 * URL parsing on every hook call (the loader's, node --cpu-prof); any other
 * path (spaces, ~, non-ASCII, Windows) goes through pathToFileURL.
 */
export function fileUrlOf(path: string): string {
  return PLAIN_PATH.test(path)
    ? `file://${path}`
    : (process.getBuiltinModule("node:url") as typeof import("node:url")).pathToFileURL(path).href;
}

/** The inverse, as fileURLToPath would answer: a plain path's URL without building a URL (~0.4 ms a hook call, node --cpu-prof). */
export function pathOfFileUrl(url: string): string {
  const path = url.startsWith("file:///") ? url.slice(7) : "";
  return PLAIN_PATH.test(path)
    ? path
    : (process.getBuiltinModule("node:url") as typeof import("node:url")).fileURLToPath(url);
}
