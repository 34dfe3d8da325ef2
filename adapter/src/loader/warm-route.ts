import { lstatSync } from "node:fs";

/**
 * Where a hook finds the warm guard that may answer it (warm-forward.ts,
 * warm-serve.ts): one socket per user, checkout build and agent. A warm
 * guard serves only calls of the same user (its folder, mode 0700, owned by
 * that user), the same cohent.cjs and cohent-core.js (their folder and
 * stat) and the same agent: the variables that choose its credential, its
 * settings and its files (AGENT_VARS). The rest of a hook's environment and
 * its working folder differ from one hook to the next (a client sets some
 * variables for one event only): they travel with each call, and the guard
 * decides the call with them (warm-serve.ts). The name is a hash of the
 * key, to find the socket; the guard compares the key again on every call
 * (sameCaller), so that a collision of names is a cold call, never another
 * agent's answer.
 */

/** What a hook process is, as far as the adapter's code can tell: its answer depends on nothing else. */
export interface Caller {
  uid: number;
  cwd: string;
  /** The folder of cohent.cjs: the checkout's .cohent/. */
  dir: string;
  /** Each file's stat (ino:size:mtime:ctime): an upgrade or a repair is another build. */
  stamps: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The variables that make another agent, or another guard: Cohent's own (the
 * token, the client, the deadline and timeouts that the guard's code reads
 * once), and those that choose the credential store, the caches and the
 * sockets' folder.
 */
export function isAgentVar(name: string): boolean {
  return name.startsWith("COHENT_") || AGENT_VARS.has(name);
}
const AGENT_VARS: ReadonlySet<string> = new Set([
  "HOME",
  "USERPROFILE",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "TMPDIR",
]);

/** The agent's variables as one text, in a fixed order: names sorted, unset ones left out. */
export function agentText(env: Caller["env"]): string {
  const names = Object.keys(env)
    .filter((k) => env[k] !== undefined && isAgentVar(k))
    .sort();
  let s = "";
  for (const k of names) s += `${k}=${env[k]}\0`;
  return s;
}

/**
 * FNV-1a over UTF-16 code units, twice with different offsets: a socket's
 * name, not a secret or a proof (sameCaller is). node:crypto would cost a
 * hook process about 2 ms to load.
 */
function fnv(text: string, basis: number): string {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The socket's file name for a caller: its user, checkout, build and agent. */
export function warmName(c: Caller): string {
  const text = `${c.uid}\0${c.dir}\0${c.stamps.join("\0")}\0${agentText(c.env)}`;
  return `${fnv(text, 0x811c9dc5)}${fnv(text, 0x01234567)}.sock`;
}

/** The folder of one user's warm guards: in the system's temporary folder, not in the checkout (a socket's path has ~100 bytes). */
export function warmDir(env: Caller["env"], uid: number): string {
  const tmp = env.TMPDIR && env.TMPDIR.startsWith("/") ? env.TMPDIR.replace(/\/+$/, "") : "/tmp";
  return `${tmp}/cohent-warm-${uid}`;
}

/**
 * A Unix socket's path has at most 103 bytes on macOS (104 with its NUL; 107 on Linux). A guard
 * whose socket's path is longer could never listen: every call runs cold then, and starts none.
 */
export const MAX_SOCKET_PATH = 103;

/** Whether a guard's socket fits there (its name, and the shorter name it listens under first: warm-serve.ts). */
export function socketFits(dir: string, name: string): boolean {
  return Buffer.byteLength(`${dir}/${name}`) <= MAX_SOCKET_PATH;
}

/** The guards' folder: missing (no call started one yet), private (a directory this user owns that nobody else can use), or shared (never used). */
export function folderState(dir: string, uid: number): "missing" | "private" | "shared" {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? "private" : "shared";
  } catch {
    return "missing";
  }
}

/** Whether a call comes from this guard's user, checkout, build and agent: what the guard compares before it answers. */
export function sameCaller(a: Caller, b: Caller): boolean {
  return (
    a.uid === b.uid &&
    a.dir === b.dir &&
    a.stamps.length === b.stamps.length &&
    a.stamps.every((s, i) => s === b.stamps[i]) &&
    agentText(a.env) === agentText(b.env)
  );
}

/**
 * Whether the warm guard may be used at all: off with COHENT_WARM=0, and
 * where a Unix socket and a uid are not (Windows).
 */
export function warmWanted(env: Caller["env"], platform: string): boolean {
  return env.COHENT_WARM !== "0" && platform !== "win32";
}

/** The call as it travels to the warm guard: one JSON line, with the caller's whole environment and folder. */
export interface WarmRequest {
  v: 2;
  caller: Caller;
  /** The hook's argv after `hook` (`--host claude`). */
  argv: string[];
  stdin: string;
}

/** The warm guard's answer: the hook's own output, or why it will not answer (the hook then runs cold). */
export type WarmAnswer =
  | { stdout?: string; stderr?: string; exitCode: number }
  | { refused: "not-same-caller" | "stale" | "bad-request" };
