import { realpathSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { CohentError } from "@cohent/protocol/codes";
import { topLevel } from "@cohent/client";

/**
 * Which repository a machine transport acts for (the session: the adapter's session.ts). One MCP
 * process is bound for its lifetime to one real, normalized Git top-level;
 * a request may name it again but never switch it; a client's filesystem
 * roots must contain it.
 */

/** The bound repository for `dir` (resolved against `cwd`). */
export function bindRepository(dir: string, cwd = process.cwd()): string {
  return topLevel(isAbsolute(dir) ? dir : resolve(cwd, dir));
}

/** A request's `repo` must normalize to the bound top-level. */
export function checkRepo(bound: string, requested: string | undefined, cwd = process.cwd()): void {
  if (requested === undefined) return;
  let top: string;
  try {
    top = bindRepository(requested, cwd);
  } catch {
    throw new CohentError(
      "REPOSITORY_MISMATCH",
      `repo ${JSON.stringify(requested.slice(0, 200))} is not this server's repository (${bound}); omit repo, or start another server for that repository.`,
    );
  }
  if (top !== bound)
    throw new CohentError(
      "REPOSITORY_MISMATCH",
      `repo ${JSON.stringify(requested.slice(0, 200))} is the repository ${top}, not this server's ${bound}; omit repo, or start another server for that repository.`,
    );
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** Whether `repo` lies inside one of the client's file roots (other URI schemes contain nothing). */
export function insideRoots(repo: string, roots: readonly { uri: string }[]): boolean {
  return roots.some(({ uri }) => {
    if (!uri.startsWith("file:")) return false;
    let dir: string;
    try {
      dir = realOrResolved(fileURLToPath(uri));
    } catch {
      return false;
    }
    return repo === dir || repo.startsWith(dir.endsWith(sep) ? dir : dir + sep);
  });
}
