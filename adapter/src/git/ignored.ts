import { git, nulList } from "@cohent/client";

/**
 * Which of these repository-relative paths Git ignores (build output,
 * caches): a shell write there is nobody's work, so it is never held. A
 * tracked file is never ignored. When Git cannot answer (no repository, a
 * failure), none is: the write is held, the safe side.
 */
export async function ignoredPaths(root: string, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  try {
    // Each path also as a folder: a folder not made yet (mkdir -p build) matches `build/` only so.
    const asked = paths.flatMap((p) => [p, `${p}/`]);
    const r = await git(root, ["check-ignore", "-z", "--stdin"], { input: asked.join("\0") + "\0" });
    // 0: some are ignored, 1: none; anything else is a failure.
    if (r.code !== 0) return new Set();
    const hit = new Set(nulList(r.stdout));
    return new Set(paths.filter((p) => hit.has(p) || hit.has(`${p}/`)));
  } catch {
    return new Set();
  }
}
