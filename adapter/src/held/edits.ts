import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { ensureStash, lstatQuiet, stashDir, writeAtomic } from "./stash.js";
import { lockFile } from "@cohent/client";

/**
 * The journal of guarded edits, shared by every session of the checkout
 * (<stash>/edits.log, one JSON line per edit start or end): a peer's own
 * allowed edit of a held file, made while our shell call ran, is not blamed
 * on the call. It also says who changed what, by content: a "wrote" line per
 * call that changed files, with the sha256 each was left with (an edit
 * tool's PostToolUse, the paths a shell call's watch found changed), which
 * the stale-write check (stale-write.ts) matches with the bytes it finds.
 */

interface EditLine {
  s: string;
  p: string[];
  ph: "start" | "end";
  t: number;
}

/** Files a session's call changed: `k[i]` is the sha256 `p[i]` was left with (null: deleted). */
interface WroteLine {
  s: string;
  p: string[];
  ph: "wrote";
  k: (string | null)[];
  t: number;
  /** The session's intent and client then, for a refusal's words. */
  i: string | null;
  c: string | null;
  /** What wrote: an edit tool (or a patch), or a shell call. */
  h: "edit" | "shell";
}

type JournalLine = EditLine | WroteLine;

/** A start without its end is taken as running this long (a client killed mid-call never ends it). */
const EDIT_OPEN_MS = 60_000;
const EDITS_KEEP_MS = 10 * 60_000;
const EDITS_KEEP = 500;
/** Who wrote what is kept longer: a session may write a file it read an hour ago. */
const WROTE_KEEP_MS = 24 * 60 * 60_000;
const WROTE_KEEP = 500;
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
  appendLine(root, { s: sessionId, p, ph: phase, t: at } satisfies EditLine, at);
}

/** One line appended (O_APPEND: parallel writers do not clobber each other), the journal compacted past its bound. */
function appendLine(root: string, entry: JournalLine, at: number): void {
  const line = JSON.stringify(entry) + "\n";
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

function readJournalLines(file: string): JournalLine[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: JournalLine[] = [];
  for (const l of text.split("\n")) {
    if (!l) continue;
    try {
      const e = JSON.parse(l) as JournalLine;
      if (typeof e.s !== "string" || !Array.isArray(e.p) || typeof e.t !== "number") continue;
      if (e.ph === "start" || e.ph === "end") out.push(e);
      else if (e.ph === "wrote" && Array.isArray(e.k) && e.k.length === e.p.length) out.push(e);
    } catch {
      /* a torn line (a writer died mid-append) */
    }
  }
  return out.sort((a, b) => a.t - b.t); // stable: lines of one instant keep their order
}

const readEdits = (file: string): EditLine[] =>
  readJournalLines(file).filter((e): e is EditLine => e.ph !== "wrote");

/**
 * Keeps the last 10 minutes of starts and ends (at most 500 lines), and the
 * last day of writes (at most 500, ~100 KB). A line appended during the rewrite
 * may be lost (see noteEdit).
 */
function compactEdits(file: string, now: number): void {
  const unlock = lockFile(file, false);
  if (!unlock) return;
  try {
    const all = readJournalLines(file);
    const spans = all.filter((e) => e.ph !== "wrote" && now - e.t <= EDITS_KEEP_MS).slice(-EDITS_KEEP);
    const wrote = all.filter((e) => e.ph === "wrote" && now - e.t <= WROTE_KEEP_MS).slice(-WROTE_KEEP);
    const kept = [...spans, ...wrote].sort((a, b) => a.t - b.t);
    writeAtomic(file, kept.map((e) => JSON.stringify(e) + "\n").join(""));
  } finally {
    unlock();
  }
}

/** One file a session's call left changed. */
export interface Wrote {
  sessionId: string;
  path: string;
  /** sha256 of the bytes the call left; null when it deleted the file. */
  key: string | null;
  at: number;
  intentId: string | null;
  client: string | null;
  how: "edit" | "shell";
}

/**
 * Notes the files a session's call changed, by the bytes each was left
 * with: what an edit tool wrote (its PostToolUse), what a shell call's
 * watch found changed. Who changed a file is then told by what changed, not
 * by who could have. Never throws (see noteEdit).
 */
export function noteWrote(
  root: string,
  sessionId: string,
  writes: readonly { path: string; key: string | null }[],
  who: { intentId: string | null; client: string | null; how: "edit" | "shell" },
  at = Date.now(),
): void {
  const p: string[] = [];
  const k: (string | null)[] = [];
  for (const w of writes) {
    try {
      p.push(normalizeRepoPath(w.path, root));
      k.push(w.key);
    } catch {
      /* not a repository path */
    }
  }
  if (p.length === 0) return;
  const line: WroteLine = {
    s: sessionId,
    p,
    ph: "wrote",
    k,
    t: at,
    i: who.intentId,
    c: who.client,
    h: who.how,
  };
  appendLine(root, line, at);
}

/** The journal's writes by path, kept for the process while the file is unchanged. */
let wroteCache: { file: string; stamp: string; byPath: Map<string, Wrote[]> } | null = null;

/** Every write of `path` the journal keeps at or after `since`, oldest first. */
export function writesOf(root: string, path: string, since: number): Wrote[] {
  const file = editsFile(root);
  const st = lstatQuiet(file);
  if (!st) return [];
  const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  if (wroteCache?.file !== file || wroteCache.stamp !== stamp) {
    const byPath = new Map<string, Wrote[]>();
    for (const e of readJournalLines(file)) {
      if (e.ph !== "wrote") continue;
      e.p.forEach((p, n) => {
        const w: Wrote = {
          sessionId: e.s,
          path: p,
          key: e.k[n]!,
          at: e.t,
          intentId: e.i ?? null,
          client: e.c ?? null,
          how: e.h === "shell" ? "shell" : "edit",
        };
        const list = byPath.get(p);
        if (list) list.push(w);
        else byPath.set(p, [w]);
      });
    }
    wroteCache = { file, stamp, byPath };
  }
  return (wroteCache.byPath.get(path) ?? []).filter((w) => w.at >= since);
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
