import { scopeCovers } from "@cohent/protocol/paths";
import type { HeldChange, HeldFile, HeldSnapshot } from "./snapshot.js";

/**
 * What changed between two snapshots of held files (held/snapshot.ts), each
 * taken over its own held paths: only paths both cover are compared. A file
 * keeps its content key while its stat is unchanged (the snapshot reuses
 * seen.json's), so a touch that leaves the bytes as they were is no change.
 * Pure: the watch between calls (held/baseline.ts) compares the checkout's
 * last known state with the state at this call.
 */

const statOf = (f: HeldFile) => `${f.size}:${f.mtime}:${f.ctime}:${f.ino}`;

/** The state a change left, as restore reads it: the bytes' hash when kept, else the stat. */
const afterOf = (f: HeldFile) => (f.key ? `sha256:${f.key}` : `stat:${statOf(f)}`);

/** Has the file changed? By content when both sides kept it, else by stat. */
function differs(a: HeldFile, b: HeldFile): boolean {
  if (a.key && b.key) return a.key !== b.key;
  return statOf(a) !== statOf(b);
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export function diffSnapshots(before: HeldSnapshot, after: HeldSnapshot): HeldChange[] {
  // Over the same held paths (the common case) every file is covered by both: no matching per file.
  const same = sameList(before.held, after.held);
  // One walk's files, reused while nothing changed (held/snapshot.ts): nothing to compare.
  if (same && before.files === after.files && before.complete === after.complete) return [];
  const now = new Map(after.files.map((f) => [f.path, f]));
  const inAfter = (p: string) => same || scopeCovers(after.held, p);
  const inBefore = (p: string) => same || scopeCovers(before.held, p);
  const changes: HeldChange[] = [];
  const known = new Set<string>();
  for (const f of before.files) {
    known.add(f.path);
    if (!inAfter(f.path)) continue;
    const base = { path: f.path, before: f.key, mode: f.mode, restorable: f.key !== null };
    const g = now.get(f.path);
    if (!g) {
      // Past the walk's bound the file may only have been left out: a deletion is told only by a complete walk.
      if (after.complete) changes.push({ ...base, change: "deleted", after: null });
      continue;
    }
    if (differs(f, g)) changes.push({ ...base, change: "modified", after: afterOf(g) });
  }
  for (const g of after.files) {
    if (known.has(g.path) || !inBefore(g.path)) continue;
    // An incomplete snapshot does not know what it left out: only its absent paths can be told created.
    if (!before.complete && !before.absent.some((a) => g.path === a || g.path.startsWith(`${a}/`))) continue;
    changes.push({
      path: g.path,
      change: "created",
      restorable: true,
      before: null,
      mode: null,
      after: afterOf(g),
    });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
