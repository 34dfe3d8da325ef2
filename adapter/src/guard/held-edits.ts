import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { ensureStash, lstatQuiet, stashDir, writeAtomic } from "./held-stash.js";
import { lockFile } from "@cohent/client/state/lock-file.js";

/**
 * The journal of guarded edits, shared by every session of the checkout
 * (<stash>/edits.log, one JSON line per edit start or end): a peer's own
 * allowed edit of a held file, made while our shell call ran, is not blamed
 * on the call.
 */

interface EditLine {
  s: string;
  p: string[];
  ph: "start" | "end";
  t: number;
}

/** A start without its end is taken as running this long (a client killed mid-call never ends it). */
const EDIT_OPEN_MS = 60_000;
const EDITS_KEEP_MS = 10 * 60_000;
const EDITS_KEEP = 500;
const EDITS_COMPACT_BYTES = 256 * 1024;

const editsFile = (root: string) => join(stashDir(root), "edits.log");

/**
 * Notes that a session's allowed (guarded) edit of `paths` starts or ends;
 * an end with no paths ends all of the session's started edits. One
 * appended line (O_APPEND: parallel writers do not clobber each other).
 * Never throws: a lost note can only make a peer's report wrong, not a guard open.
 */
export function noteEdit(
  root: string,
  sessionId: string,
  paths: readonly string[],
  phase: "start" | "end",
  at = Date.now(),
): void {
  const p: string[] = [];
  for (const x of paths) {
    try {
      p.push(normalizeRepoPath(x, root));
    } catch {
      /* not a repository path */
    }
  }
  const line = JSON.stringify({ s: sessionId, p, ph: phase, t: at } satisfies EditLine) + "\n";
  const file = editsFile(root);
  try {
    try {
      appendFileSync(file, line);
    } catch {
      ensureStash(root);
      appendFileSync(file, line);
    }
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) > EDITS_COMPACT_BYTES) compactEdits(file, at);
  } catch {
    /* see above */
  }
}

function readEdits(file: string): EditLine[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: EditLine[] = [];
  for (const l of text.split("\n")) {
    if (!l) continue;
    try {
      const e = JSON.parse(l) as EditLine;
      if (
        typeof e.s === "string" &&
        Array.isArray(e.p) &&
        (e.ph === "start" || e.ph === "end") &&
        typeof e.t === "number"
      )
        out.push(e);
    } catch {
      /* a torn line (a writer died mid-append) */
    }
  }
  return out.sort((a, b) => a.t - b.t); // stable: lines of one instant keep their order
}

/** Keeps the last 10 minutes, at most 500 lines. A line appended during the rewrite may be lost (see noteEdit). */
function compactEdits(file: string, now: number): void {
  const unlock = lockFile(file, false);
  if (!unlock) return;
  try {
    const kept = readEdits(file)
      .filter((e) => now - e.t <= EDITS_KEEP_MS)
      .slice(-EDITS_KEEP);
    writeAtomic(file, kept.map((e) => JSON.stringify(e) + "\n").join(""));
  } finally {
    unlock();
  }
}

interface Span {
  s: string;
  p: string[];
  from: number;
  to: number;
}

/** The journal's edits as time spans, kept for the process while the file is unchanged: a call's check asks once per changed path. */
let cached: { file: string; stamp: string; spans: Span[] } | null = null;

function spansOf(file: string): Span[] {
  const st = lstatQuiet(file);
  if (!st) return [];
  const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  if (cached?.file === file && cached.stamp === stamp) return cached.spans;
  const open = new Map<string, EditLine[]>();
  const spans: Span[] = [];
  for (const e of readEdits(file)) {
    const mine = open.get(e.s) ?? [];
    if (e.ph === "start") {
      open.set(e.s, [...mine, e]);
      continue;
    }
    // An end with no paths ends every started edit of the session; else those sharing a path with it.
    const ends = e.p.length === 0 ? mine : mine.filter((o) => o.p.some((x) => e.p.includes(x)));
    for (const o of ends) spans.push({ s: e.s, p: o.p, from: o.t, to: e.t });
    if (ends.length === 0 && e.p.length) spans.push({ s: e.s, p: e.p, from: e.t - EDIT_OPEN_MS, to: e.t });
    open.set(
      e.s,
      mine.filter((o) => !ends.includes(o)),
    );
  }
  for (const [s, starts] of open)
    for (const o of starts) spans.push({ s, p: o.p, from: o.t, to: o.t + EDIT_OPEN_MS });
  cached = { file, stamp, spans };
  return spans;
}

/**
 * The session (other than `exceptSession`) whose guarded edit of `path` ran
 * during [from, to], or null. A start without an end counts as running for
 * 60 s; an end whose start was dropped, for the 60 s before it.
 */
export function explainedBy(
  root: string,
  path: string,
  from: number,
  to: number,
  exceptSession: string,
): string | null {
  let target: string;
  try {
    target = normalizeRepoPath(path, root);
  } catch {
    return null;
  }
  let best: Span | null = null;
  for (const x of spansOf(editsFile(root))) {
    if (x.s === exceptSession || x.from > to || x.to < from || x.p.length === 0) continue;
    if (best && x.from < best.from) continue;
    if (scopeCovers(x.p, target)) best = x;
  }
  return best?.s ?? null;
}
