import { realpathSync } from "node:fs";
import { childProcess } from "../builtins.js";
import { CohentError } from "@cohent/protocol/codes";

/**
 * Every git command the adapter runs, run the same careful way: no optional
 * locks (a read never takes index.lock from under the agent's own git), no
 * filesystem monitor (core.fsmonitor can name a program to execute), no
 * external diff drivers or text conversion (both run repository-configured
 * programs), no pager, no prompt, and revisions validated and passed after
 * --end-of-options so that none can be read as an option.
 */

const SAFE_CONFIG = ["-c", "core.fsmonitor=false", "-c", "core.pager=cat"];

export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", LC_ALL: "C" };
}

/** The argv git receives for `args` (exported for the unit table). */
export function gitArgv(args: readonly string[]): string[] {
  return [...SAFE_CONFIG, ...args];
}

/** Runs git synchronously; null when it fails (not a repository, no such ref, no git). */
export function gitSync(cwd: string, args: readonly string[]): string | null {
  try {
    return childProcess()
      .execFileSync("git", gitArgv(args), {
        cwd,
        stdio: ["ignore", "pipe", "ignore"],
        env: gitEnv(),
        timeout: 15_000,
        maxBuffer: 16 * 1024 * 1024,
      })
      .toString();
  } catch {
    return null;
  }
}

/** Runs git asynchronously; an abort kills it. Rejects with the exit's stderr; an abort rejects with an AbortError. */
export function gitAsync(cwd: string, args: readonly string[], signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    childProcess().execFile(
      "git",
      gitArgv(args),
      {
        cwd,
        env: gitEnv(),
        timeout: 15_000,
        maxBuffer: 16 * 1024 * 1024,
        encoding: "utf8",
        ...(signal ? { signal } : {}),
      },
      (err, stdout, stderr) =>
        err ? reject(Object.assign(err, { stderr: String(stderr) })) : resolve(String(stdout)),
    );
  });
}

/**
 * A revision is safe to hand to git when it cannot be read as an option or
 * smuggle a second argument: no leading "-", no NUL or other control
 * character, no whitespace, bounded length.
 */
export function isSafeRevision(rev: string): boolean {
  return (
    typeof rev === "string" &&
    rev.length > 0 &&
    rev.length <= 256 &&
    !rev.startsWith("-") &&
    !/[\x00-\x20\x7f]/.test(rev)
  );
}

/** The real, normalized top-level of the repository holding `dir` (symlinks resolved). */
export function topLevel(dir: string): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw new CohentError("INVALID_REPOSITORY", `${dir} does not exist.`);
  }
  const out = gitSync(real, ["rev-parse", "--show-toplevel"])?.trim();
  if (!out)
    throw new CohentError(
      "INVALID_REPOSITORY",
      `${dir} is not inside a Git repository (git rev-parse --show-toplevel failed).`,
    );
  try {
    return realpathSync(out);
  } catch {
    return out;
  }
}

/** The commit a revision names, verified after --end-of-options; null when it names none. */
export function resolveCommit(root: string, rev: string): string | null {
  if (!isSafeRevision(rev))
    throw new CohentError(
      "INVALID_INPUT",
      `Unsafe revision ${JSON.stringify(rev.slice(0, 80))}: it may not start with "-" or contain whitespace or control characters.`,
    );
  return (
    gitSync(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`])?.trim() || null
  );
}

/** HEAD's commit, or null in a repository without commits. */
export function headCommit(root: string): string | null {
  return resolveCommit(root, "HEAD");
}

/**
 * Paths of the staged change, from the index itself: `git diff --cached
 * --name-only -z`, renames split into their two sides so both are named.
 * Works in a repository without commits (git compares with the empty tree).
 */
export async function stagedPaths(root: string, signal?: AbortSignal): Promise<string[]> {
  const out = await gitAsync(
    root,
    [
      "diff",
      "--cached",
      "--name-only",
      "-z",
      "--no-ext-diff",
      "--no-textconv",
      "--no-renames",
      "--no-color",
      "--",
    ],
    signal,
  );
  return [...new Set(out.split("\0").filter(Boolean))];
}
