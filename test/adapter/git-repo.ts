import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Scratch Git repositories for the guard and commit tests: real git, no global config. */

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

export function write(root: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

/** A repository with one commit holding `files` (none when there are no files). */
export function makeRepo(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "cohent-git-")));
  sh(root, "init", "-q", "-b", "main");
  sh(root, "config", "user.name", "Test");
  sh(root, "config", "user.email", "test@example.com");
  sh(root, "config", "commit.gpgsign", "false");
  for (const [f, t] of Object.entries(files)) write(root, f, t);
  if (Object.keys(files).length) {
    sh(root, "add", "-A");
    sh(root, "commit", "-q", "-m", "initial");
  }
  return root;
}

/** Everything a peer would look at to see its work: unstaged and staged diffs, and the untracked files. */
export function snapshot(root: string, under: string): { diff: string; cached: string; untracked: string } {
  return {
    diff: sh(root, "diff", "--", under),
    cached: sh(root, "diff", "--cached", "--", under),
    untracked: sh(root, "ls-files", "--others", "--exclude-standard", "--", under),
  };
}
