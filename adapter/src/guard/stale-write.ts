import { readFileSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { writesOf, type Wrote } from "../held/edits.js";
import { readJournal } from "../held/catches.js";
import { getObject, stashDir } from "../held/stash.js";
import { lines, matchLines } from "../held/merge3.js";
import {
  hashFile,
  READ_KEEP_BYTES,
  READ_MAX_BYTES,
  readEntry,
  refreshStat,
  repoPathOf,
  statVouches,
} from "./read-record.js";

/**
 * A stale write (issue 50, item 3): a write that names a file whose bytes
 * another session changed since this session last read it. The decision
 * asks `staleWrites` for a call's write targets and, when it returns any,
 * refuses with `staleReason` (rule `stale-write`).
 *
 * What is compared is the content (docs/decisions/0009-stale-writes-by-content.md):
 * the sha256 of the bytes this session last read (read-record.ts) with the
 * bytes now. The stat only spares the hash when it vouches for the bytes;
 * a new mtime over the same bytes (a touch, a checkout of identical
 * content, a formatter that changed nothing) is no change. Who changed
 * them is told by what changed: the journal's writes (held/edits.ts) and
 * the caught writes (held/catches.ts) that left these very bytes, else the
 * last other session that wrote the file since. Changed bytes that no other
 * session wrote (the person's editor, this session's own shell) refuse
 * nothing: the check is about peers' work, and a false refusal costs a turn.
 */

/** One target changed since this session last read it, and by whom. */
export interface StaleWrite {
  /** Repository-relative POSIX path. */
  path: string;
  /** The session that changed it, with its intent where known. */
  by: {
    sessionId: string;
    intentId: string | null;
    person: string | null;
    objective: string | null;
    /** Its client, as its session recorded it. */
    client?: string | null;
  };
  /** When it changed (ms since the epoch). */
  at: number;
  /** The changed line ranges of the current bytes, 1-based and inclusive; empty when unknown (binary, past the bound). */
  lines: [number, number][];
  /** What changed it: an edit tool (or a patch), or a shell call. */
  how?: "edit" | "shell";
}

/** What the session last read of a file: its bytes' key, and when. */
export interface LastRead {
  key: string;
  at: number;
}

/**
 * Who changed a file whose bytes are now `current` since the session's
 * last read, or null when nobody else did. Pure. `writes`: the file's
 * writes at or after the read, oldest first, every session's. The writer
 * of the very bytes found wins (the first to leave them: a later note of
 * the same bytes is a call that changed nothing); past that, the last other
 * session that wrote the file since.
 */
export function changedBy(
  read: LastRead,
  current: string,
  writes: readonly Wrote[],
  sessionId: string,
): Wrote | null {
  if (current === read.key) return null;
  const since = writes.filter((w) => w.at >= read.at);
  const exact = since.find((w) => w.key === current);
  if (exact) return exact.sessionId === sessionId ? null : exact;
  return since.filter((w) => w.sessionId !== sessionId).at(-1) ?? null;
}

/** The caught writes (held/catches.ts) of `path` at or after `since` that left the bytes `current`, as writes. */
function caughtWrites(root: string, path: string, since: number): Wrote[] {
  const out: Wrote[] = [];
  for (const c of readJournal(stashDir(root)).catches) {
    if (c.at < since) continue;
    // A change noticed between calls names its likely writer, or none ("between:unknown").
    const sessionId = c.sessionId.startsWith("between:") ? c.sessionId.slice("between:".length) : c.sessionId;
    if (!sessionId || sessionId === "unknown") continue;
    for (const ch of c.changes)
      if (ch.path === path && ch.after?.startsWith("sha256:"))
        out.push({
          sessionId,
          path,
          key: ch.after.slice("sha256:".length),
          at: c.at,
          intentId: null,
          client: null,
          how: "shell",
        });
  }
  return out;
}

/**
 * The lines of `now` that differ from `before`, as 1-based inclusive ranges;
 * a deletion marks the line after it (the last line at the end). Pure.
 * Empty when unknown: no bytes from before, binary, too large or too different.
 */
export function changedLines(before: Buffer | null, now: Buffer): [number, number][] {
  if (!before || before.length > READ_KEEP_BYTES || now.length > READ_KEEP_BYTES) return [];
  if (before.includes(0) || now.includes(0)) return [];
  const a = lines(before);
  const b = lines(now);
  const m = matchLines(a, b);
  if (!m || b.length === 0) return [];
  const changed = new Uint8Array(b.length).fill(1);
  for (let i = 0; i < a.length; i++) if (m[i]! >= 0) changed[m[i]!] = 0;
  let next = 0; // the line of `now` after the last matched one
  for (let i = 0; i < a.length; i++) {
    if (m[i]! >= 0) next = m[i]! + 1;
    else changed[Math.min(next, b.length - 1)] = 1;
  }
  const out: [number, number][] = [];
  for (let j = 0; j < b.length; j++) {
    if (!changed[j]) continue;
    const last = out.at(-1);
    if (last && last[1] === j) last[1] = j + 1;
    else out.push([j + 1, j + 1]);
  }
  return out;
}

/** The targets of a write by `sessionId` that are stale. Never throws; sync and cheap (a stat per target in the steady state). */
export function staleWrites(root: string, sessionId: string, targets: readonly string[]): StaleWrite[] {
  try {
    const out: StaleWrite[] = [];
    const paths = new Set(targets.map((t) => repoPathOf(root, t)));
    for (const path of paths) {
      const read = path ? readEntry(root, sessionId, path) : undefined;
      if (!path || !read) continue; // a file this session never read is never refused
      const abs = join(root, path);
      let st: Stats | undefined;
      try {
        st = statSync(abs, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      // Gone (a write creates it anew), not a file, or past the bound the read was not recorded within.
      if (!st?.isFile() || st.size > READ_MAX_BYTES || statVouches(read, st)) continue;
      const current = hashFile(abs);
      if (current === null) continue;
      if (current === read[3]) {
        refreshStat(root, sessionId, path, st); // the same bytes under a new stat (a touch): a stat next time
        continue;
      }
      const last = { key: read[3], at: read[4] };
      const writes = [...writesOf(root, path, last.at), ...caughtWrites(root, path, last.at)].sort(
        (x, y) => x.at - y.at,
      );
      const w = changedBy(last, current, writes, sessionId);
      if (!w) continue;
      out.push({
        path,
        by: { sessionId: w.sessionId, intentId: w.intentId, person: null, objective: null, client: w.client },
        at: w.at,
        lines: changedLines(getObject(stashDir(root), read[3]), readFileSync(abs)),
        how: w.how,
      });
    }
    return out;
  } catch {
    return [];
  }
}

/** Peer text (ids, names, objectives) quoted and trimmed: it is the peer's, not ours. */
const quoted = (s: string, max = 80) => JSON.stringify(s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** "lines 3-7, 12" (at most 8 ranges named). */
export function rangesText(lines: readonly [number, number][]): string {
  const shown = lines.slice(0, 8).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
  const more = lines.length > 8 ? ` and ${lines.length - 8} more ranges` : "";
  const one = lines.length === 1 && lines[0]![0] === lines[0]![1];
  return `${one ? "line" : "lines"} ${shown.join(", ")}${more}`;
}

function peerWords(by: StaleWrite["by"]): string {
  const about = [
    by.client ? quoted(by.client, 40) : null,
    by.person ? `person ${quoted(by.person, 40)}` : null,
    by.intentId ? `intent ${quoted(by.intentId, 60)}` : null,
    by.objective ? `objective ${quoted(by.objective)}` : null,
  ].filter(Boolean);
  return `session ${quoted(by.sessionId, 60)}${about.length ? ` (${about.join(", ")})` : ""}`;
}

/** The refusal's words for the model: the peer, its intent, when, the changed lines, and to read the file again. */
export function staleReason(stale: readonly StaleWrite[]): string {
  const each = stale.map((x) => {
    const lines = x.lines.length ? `${rangesText(x.lines)} of ` : "";
    const how =
      x.how === "shell" ? " through a shell command" : x.how === "edit" ? " with its edit tool" : "";
    return `${peerWords(x.by)} changed ${lines}${x.path}${how} at ${new Date(x.at).toISOString()}, after this session last read it`;
  });
  const paths = [...new Set(stale.map((x) => x.path))].join(", ");
  return `stale write refused: ${each.join("; ")}. Writing now would erase that work. Read ${paths} again, then make the change over the current bytes.`;
}
