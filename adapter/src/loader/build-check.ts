import { readFileSync, statSync } from "node:fs";
import { previewHook } from "./fast-path.js";
import { IN_PROCESS_MARK } from "./in-process-mark.js";

/**
 * The one rule of every process that outlives a call and decides (the MCP
 * server Claude Code calls as its mcp_tool handler, the warm guard, OpenCode's
 * plugin): the checkout's build decides, not the one the process loaded when
 * it started. On each call the build's files are stat'ed (their identity: inode,
 * size, mtime, ctime); a changed build is loaded before deciding; a missing
 * build, or one that fails to load or throws, refuses the call in the host's
 * dialect, with the repair command. An upgrade or a repair thus reaches a
 * running session at its next call, and a deleted or broken build is a
 * refusal, as it is for a hook process, which loads the checkout's files anew.
 *
 * checkedHook is that rule, one piece of code: the loader's in-process API runs
 * cohent-core.js through it (the warm guard and OpenCode's plugin call that API),
 * and the MCP server runs the checkout's cohent.cjs through it (adapterBuild).
 * The plugin itself, which cannot import anything before it has loaded the
 * adapter, only requires cohent.cjs again when its stat changes.
 */

/** The loader, and the code it reads: together, the build that decides. */
export const ADAPTER_FILE = "cohent.cjs";
export const CORE_FILE = "cohent-core.js";

/** What rewrites the adapter's files: not the checkout's own cohent.mjs, which may be what is missing. */
export const REPAIR = "Repair: npx cohent init --upgrade (it rewrites the adapter's files in .cohent/).";

/** One hook call's answer, as the spawned hook prints it. */
export interface Answer {
  stdout?: string;
  stderr?: string;
  exitCode: number;
}

/** The in-process hook's options (in-process-main.ts): the host, the checkout, and how the call came. */
export interface HookOptions {
  host: string;
  dir: string;
  within?: number;
  via?: { wiring: "mcp-tool"; hostVersion: string | null };
}

export type InProcessHook = (payload: string, o: HookOptions) => Promise<Answer>;

/** A file's identity: another file in its place, or the same file written again, is another stamp. */
export function stampOf(file: string): string | null {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return null;
  }
}

/** How a person finds a file of the build: `.cohent/<file>` in a checkout, its full path elsewhere. */
export function shownName(dir: string, file: string): string {
  return /[\\/]\.cohent$/.test(dir) ? `.cohent/${file}` : `${dir}/${file}`;
}

/** The build in `dir` as stamps (cohent.cjs, cohent-core.js), or the reason it is not there. */
export function buildStamps(dir: string): { stamps: [string, string] } | { reason: string } {
  const adapter = stampOf(`${dir}/${ADAPTER_FILE}`);
  const core = adapter && stampOf(`${dir}/${CORE_FILE}`);
  if (adapter && core) return { stamps: [adapter, core] };
  const file = adapter ? CORE_FILE : ADAPTER_FILE;
  return { reason: `Cohent: ${shownName(dir, file)} is missing: it holds the adapter's code. ${REPAIR}` };
}

/**
 * What kind of failure, for a reason the model reads: the error's code or class, never its message,
 * which may carry a stack or an absolute path (a broken build's own text).
 */
export function failureKind(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  const name = err instanceof Error ? err.name : typeof err;
  return /^[A-Za-z]{1,40}$/.test(name) ? name : "Error";
}

/** What a build is, for checkedHook: how to see it, how to load it, and what to call it in a reason. */
export interface Build {
  /** Its identity now, or why there is none (missing). Called on every call: a stat or two. */
  stamp(): { stamp: string } | { reason: string };
  /** Loads it: its hook, or why it cannot serve (unreadable, of another build, throws at load). */
  load(): InProcessHook | { reason: string };
  /** The file a throw is blamed on, as shownName writes it. */
  name: string;
  /** The build this process loaded already, and its stamp then: used as long as the stamp holds. */
  own?: { stamp: string; hook: InProcessHook };
}

/** A refusal in the host's dialect: a tool call denied, any other event let be with the reason on stderr. */
export const refusal = (payload: string, host: string, reason: string): Answer =>
  previewHook(payload, ["--host", host]).unloadable(reason);

/**
 * The hook of a process that lives past one call: the build `b` as the checkout
 * holds it now, checked on every call (b.stamp), loaded again when it changed,
 * and a refusal when it is missing, cannot be loaded, or throws.
 */
export function checkedHook(b: Build): InProcessHook {
  let loaded: { stamp: string; hook: InProcessHook } | null = b.own ?? null;
  return async (payload, o) => {
    const now = b.stamp();
    if (!("stamp" in now)) return refusal(payload, o.host, now.reason);
    if (!loaded || loaded.stamp !== now.stamp) {
      loaded = null;
      let hook: InProcessHook | { reason: string };
      try {
        hook = b.load();
      } catch (err) {
        hook = { reason: `Cohent: ${b.name} failed to load (${failureKind(err)}). ${REPAIR}` };
      }
      if (typeof hook !== "function") return refusal(payload, o.host, hook.reason);
      loaded = { stamp: now.stamp, hook };
    }
    try {
      return await loaded.hook(payload, o);
    } catch (err) {
      return refusal(
        payload,
        o.host,
        `Cohent: ${b.name} threw (${failureKind(err)}), so this call is refused. ${REPAIR}`,
      );
    }
  };
}

/**
 * cohent.cjs in `dir` through its in-process API (what OpenCode's plugin
 * requires): a fresh module, whose hook compiles the cohent-core.js beside
 * it. Only a file whose head names the API is required: an older or foreign
 * cohent.cjs would run its CLI in this process.
 */
export function requireAdapter(dir: string): InProcessHook | { reason: string } {
  const file = `${dir}/${ADAPTER_FILE}`;
  const name = shownName(dir, ADAPTER_FILE);
  let head: string;
  try {
    head = readFileSync(file, "latin1").slice(0, 4096);
  } catch (err) {
    return { reason: `Cohent: ${name} cannot be read (${(err as NodeJS.ErrnoException).code}). ${REPAIR}` };
  }
  if (!head.includes(IN_PROCESS_MARK))
    return { reason: `Cohent: ${name} is not an adapter this process can load. ${REPAIR}` };
  // Loaded only here: a hook process that never reloads a build does not load it.
  const { createRequire } = process.getBuiltinModule("node:module") as typeof import("node:module");
  const req = createRequire(file);
  delete req.cache[req.resolve(file)];
  const g = globalThis as { cohentInProcess?: unknown };
  g.cohentInProcess = IN_PROCESS_MARK;
  let m: { hook?: unknown };
  try {
    m = req(file) as { hook?: unknown };
  } finally {
    delete g.cohentInProcess;
    // The module stays out of the cache: the next change requires the file anew.
    delete req.cache[req.resolve(file)];
  }
  if (!m || typeof m.hook !== "function")
    return { reason: `Cohent: ${name} has no in-process hook. ${REPAIR}` };
  return m.hook as InProcessHook;
}

/**
 * The checkout's adapter (cohent.cjs and cohent-core.js in `dir`) as a checked
 * hook: `own`, the code this process runs, decides while both files are the
 * ones it loaded (their stamps when it did); any change loads the files anew.
 */
export function adapterBuild(
  dir: string,
  own?: { stamps: readonly string[]; hook: InProcessHook },
): InProcessHook {
  return checkedHook({
    stamp() {
      const b = buildStamps(dir);
      return "stamps" in b ? { stamp: b.stamps.join("|") } : b;
    },
    load: () => requireAdapter(dir),
    name: shownName(dir, ADAPTER_FILE),
    ...(own ? { own: { stamp: own.stamps.join("|"), hook: own.hook } } : {}),
  });
}
