import { realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/**
 * The directory a call is judged in. The dialect has already said where
 * the call runs (the payload's cwd, or a shell tool's own working
 * directory resolved against it: hosts/dialect.ts runsIn). When that
 * directory's real path lies in the checkout, it is named by its place
 * there, so that a directory reached through a symbolic link (a `workdir`
 * that links into a peer's folder, a checkout opened through a linked
 * path) is judged where the call's writes land. Outside the checkout, or
 * when it cannot be resolved (it does not exist, so nothing runs there),
 * it stays as named.
 */

export type RealPath = (p: string) => string | null;

const realOf: RealPath = (p) => {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
};

export function checkoutCwd(cwd: string, root: string | null, real: RealPath = realOf): string {
  if (!root) return cwd;
  const dir = real(cwd);
  const top = dir === null ? null : real(root);
  if (dir === null || top === null) return cwd;
  const rel = relative(top, dir);
  if (rel === "") return root;
  if (rel === ".." || rel.startsWith(".." + sep) || isAbsolute(rel)) return cwd;
  return join(root, rel);
}
