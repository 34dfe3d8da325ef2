import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Finds a folder Cohent ships next to its code: the migrations and the built
 * Control Room. In the workspace they sit at the repository root (three levels
 * above backend/src/…); in the published package, one level above lib/. So walk
 * up from this module rather than counting levels, which differ between the two.
 */
export function shipped(rel: string, from: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(from));
  for (;;) {
    const candidate = path.join(dir, rel);
    if (existsSync(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) return path.join(path.dirname(fileURLToPath(from)), rel); // not found: a path the error can name
    dir = up;
  }
}
