import { lstatSync } from "node:fs";

/**
 * Where a hook finds the warm guard that may answer it (warm-forward.ts,
 * warm-serve.ts): one socket per user, checkout build and environment. A
 * warm guard serves only calls that a hook process of its own would have
 * made: the same user (its folder, mode 0700, owned by that user), the same
 * cohent.cjs and cohent-core.js (their stat), the same working folder and
 * the same environment, variable for variable. The name is a hash of all of
 * that, to find the socket; the guard compares the whole again on every
 * call (sameCaller), so that a collision of names is a cold call, never
 * another caller's answer.
 */

/** What a hook process is, as far as the adapter's code can tell: its answer depends on nothing else. */
export interface Caller {
  uid: number;
  cwd: string;
  /** Each file's stat (ino:size:mtime:ctime): an upgrade or a repair is another build. */
  stamps: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
}

/** The environment as one text, in a fixed order: names sorted, unset ones left out. */
export function envText(env: Caller["env"]): string {
  const names = Object.keys(env)
    .filter((k) => env[k] !== undefined)
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

/** The socket's file name for a caller. */
export function warmName(c: Caller): string {
  const text = `${c.uid}\0${c.cwd}\0${c.stamps.join("\0")}\0${envText(c.env)}`;
  return `${fnv(text, 0x811c9dc5)}${fnv(text, 0x01234567)}.sock`;
}

/** The folder of one user's warm guards: in the system's temporary folder, not in the checkout (a socket's path has ~100 bytes). */
export function warmDir(env: Caller["env"], uid: number): string {
  const tmp = env.TMPDIR && env.TMPDIR.startsWith("/") ? env.TMPDIR.replace(/\/+$/, "") : "/tmp";
  return `${tmp}/cohent-warm-${uid}`;
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

/** Whether a call comes from a process that is this guard's twin: what the guard compares before it answers. */
export function sameCaller(a: Caller, b: Caller): boolean {
  return (
    a.uid === b.uid &&
    a.cwd === b.cwd &&
    a.stamps.length === b.stamps.length &&
    a.stamps.every((s, i) => s === b.stamps[i]) &&
    sameEnv(a.env, b.env)
  );
}

function sameEnv(a: Caller["env"], b: Caller["env"]): boolean {
  const names = Object.keys(a).filter((k) => a[k] !== undefined);
  if (names.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false;
  return names.every((k) => b[k] === a[k]);
}

/**
 * Whether the warm guard may be used at all: off with COHENT_WARM=0, and
 * where a Unix socket and a uid are not (Windows).
 */
export function warmWanted(env: Caller["env"], platform: string): boolean {
  return env.COHENT_WARM !== "0" && platform !== "win32";
}

/** The call as it travels to the warm guard: one JSON line. */
export interface WarmRequest {
  v: 1;
  caller: Caller;
  /** The hook's argv after `hook` (`--host claude`). */
  argv: string[];
  stdin: string;
}

/** The warm guard's answer: the hook's own output, or why it will not answer (the hook then runs cold). */
export type WarmAnswer =
  | { stdout?: string; stderr?: string; exitCode: number }
  | { refused: "not-same-caller" | "stale" | "bad-request" };
