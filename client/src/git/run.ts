import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { childProcess } from "../builtins.js";
import { gitArgv, gitEnv } from "./git.js";

/**
 * git with the adapter's careful defaults (git.ts: no optional locks, no
 * fsmonitor, no pager, no prompt), plus what the guard and `commit` need
 * beyond gitSync/gitAsync: the exit code and stderr, stdin, extra
 * environment (GIT_INDEX_FILE), and patience with .git/index.lock.
 */

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitRunOptions {
  env?: Record<string, string>;
  input?: string;
  signal?: AbortSignal;
}

export function git(cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = childProcess().spawn("git", gitArgv(["-c", "core.quotepath=false", ...args]), {
      cwd,
      env: gitEnv({ ...process.env, ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
      timeout: 15_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
  });
}

/** NUL-separated output into paths. */
export const nulList = (s: string): string[] => s.split("\0").filter(Boolean);

/** The lock file git takes on the real index of the checkout at `root` (worktrees have their own). */
export async function indexLockPath(root: string): Promise<string> {
  const r = await git(root, ["rev-parse", "--git-path", "index"]);
  const p = r.stdout.trim() || ".git/index";
  return `${isAbsolute(p) ? p : join(root, p)}.lock`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOCKED = /index\.lock['"]?: File exists|Unable to create .*\.lock|cannot lock ref|unable to lock/i;

/**
 * Runs a git command that writes the real index or a ref, waiting (up to
 * `waitMs`) while another git holds the lock instead of failing at once:
 * two agents committing at the same moment is normal in a shared checkout.
 */
/** Waits until nobody holds the real index's lock, or the deadline passes; true when it is free. */
export async function waitForIndexLock(root: string, deadline: number): Promise<boolean> {
  const lock = await indexLockPath(root);
  for (let pause = 20; existsSync(lock); pause = Math.min(pause * 2, 200)) {
    if (Date.now() >= deadline) return false;
    await sleep(pause);
  }
  return true;
}

export async function gitPatiently(
  root: string,
  args: readonly string[],
  waitMs: number,
  opts: GitRunOptions = {},
): Promise<GitResult> {
  const lock = await indexLockPath(root);
  const deadline = Date.now() + waitMs;
  for (let pause = 20; ; pause = Math.min(pause * 2, 200)) {
    while (existsSync(lock) && Date.now() < deadline) await sleep(pause);
    const r = await git(root, args, opts);
    if (r.code === 0 || !LOCKED.test(r.stderr) || Date.now() >= deadline) return r;
    await sleep(pause);
  }
}
