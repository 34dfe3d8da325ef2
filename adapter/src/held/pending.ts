import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { HeldFile, HeldSnapshot } from "./snapshot.js";
import { ensureStash, readJson, removeQuietly, safeName, stashDir, writeAtomic } from "./stash.js";

/**
 * The snapshot taken at a call's PreToolUse, kept in the stash until its
 * PostToolUse compares: pending/<session>~<call key, or "last">.json.
 */

/** What the caller keeps with the snapshot: these fields, and any of its own (JSON). */
export interface PendingMeta {
  command: string | null;
  tool: string;
  at: number;
}

/** A held file as a row (the pending and baseline files hold thousands: arrays, not objects). */
export type FileRow = [string, number, string, string, string, number, string | null];

export const toRows = (files: readonly HeldFile[]): FileRow[] =>
  files.map((f) => [f.path, f.size, f.mtime, f.ctime, f.ino, f.mode, f.key]);

export const fromRows = (rows: readonly FileRow[]): HeldFile[] =>
  rows.map(([path, size, mtime, ctime, ino, mode, key]) => ({ path, size, mtime, ctime, ino, mode, key }));

interface PendingFile {
  v: 1;
  sessionId: string;
  callKey: string | null;
  meta: PendingMeta;
  snap: Omit<HeldSnapshot, "files"> & { files: FileRow[] };
}

/** A pending call older than this has lost its PostToolUse (a killed client): its file is dropped. */
const PENDING_STALE_MS = 60 * 60_000;

function pendingFile(root: string, sessionId: string, callKey: string | null): string {
  return join(
    stashDir(root),
    "pending",
    `${safeName(sessionId)}~${callKey === null ? "last" : safeName(callKey)}.json`,
  );
}

/**
 * Keeps `snap` until the call's PostToolUse. callKey: the client's tool-call
 * id, or null for "the session's last call". Throws when it cannot be
 * written: the call then cannot be checked afterwards, so the caller fails closed.
 */
export function savePending<M extends PendingMeta>(
  root: string,
  sessionId: string,
  callKey: string | null,
  snap: HeldSnapshot,
  meta: M,
  /**
   * A long-lived guard: the snapshot is kept in this process at once and
   * its file written after the answer (the Post comes here; the file serves
   * a Post another process gets, and the peers' in-flight check). Only once
   * this process has written the stash: a first call is refused when it cannot.
   */
  o: { later?: boolean } = {},
): void {
  const file = pendingFile(root, sessionId, callKey);
  flushPending();
  const write = () => {
    const body: PendingFile = {
      v: 1,
      sessionId,
      callKey,
      meta,
      snap: { ...snap, files: toRows(snap.files) },
    };
    ensureStash(root);
    mkdirSync(join(file, ".."), { recursive: true });
    writeAtomic(file, JSON.stringify(body));
    dropStalePending(join(file, ".."), meta.at);
    return stampOf(file);
  };
  if (o.later && writable.has(root)) {
    const k: Kept = { file, stamp: null, snap, meta, later: null };
    const run = () => {
      k.later = null;
      try {
        k.stamp = write();
      } catch {
        /* its own check runs here from memory; elsewhere the comparison between calls catches its writes */
      }
    };
    k.later = { run, timer: setImmediate(run) };
    kept = k;
    return;
  }
  try {
    kept = { file, stamp: write(), snap, meta, later: null };
    writable.add(root);
  } catch (err) {
    throw new Error(`Cohent could not keep the held-files snapshot (${file}): ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Checkouts whose stash took a pending snapshot in this process. */
const writable = new Set<string>();

/** A snapshot kept for writing after the answer is written now: before the pending folder is read, or another is kept. */
export function flushPending(): void {
  const later = kept?.later;
  if (!later) return;
  clearImmediate(later.timer);
  later.run();
}

function dropStalePending(dir: string, now: number): void {
  try {
    const names = readdirSync(dir);
    if (names.length <= 16) return; // a few calls in flight: nothing to look at
    for (const n of names) {
      const st = statSync(join(dir, n), { throwIfNoEntry: false });
      if (st && now - st.mtimeMs > PENDING_STALE_MS) removeQuietly(join(dir, n));
    }
  } catch {
    /* housekeeping only */
  }
}

/** The snapshot savePending kept for this call, removed as it is taken; null when there is none. */
export function takePending(
  root: string,
  sessionId: string,
  callKey: string | null,
): { snap: HeldSnapshot; meta: PendingMeta } | null {
  const file = pendingFile(root, sessionId, callKey);
  // The same process kept it at Pre (a long-lived guard) and nobody wrote it since: no parse.
  if (kept?.file === file && (kept.later || (kept.stamp !== null && kept.stamp === stampOf(file)))) {
    const { snap, meta, later } = kept;
    kept = null;
    if (later) clearImmediate(later.timer);
    // Written, or (not yet written) an older call's of the same name that another process left: neither is pending now.
    removeQuietly(file);
    return { snap, meta };
  }
  const body = readJson<PendingFile>(file);
  removeQuietly(file);
  if (!body || body.v !== 1 || !body.snap || !Array.isArray(body.snap.files)) return null;
  return { snap: { ...body.snap, files: fromRows(body.snap.files) }, meta: body.meta };
}

/** The pending snapshot this process kept last, with the file's stamp once written. */
interface Kept {
  file: string;
  stamp: string | null;
  snap: HeldSnapshot;
  meta: PendingMeta;
  /** Its file still to write (after the answer). */
  later: { run: () => void; timer: NodeJS.Immediate } | null;
}
let kept: Kept | null = null;

const stampOf = (file: string) => {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : null;
};

/**
 * Every snapshot kept for this session's calls, removed as taken: at the
 * session's next call, a call whose PostToolUse never came (interrupted,
 * or a client that sends none) is compared whatever its id.
 */
export function takeAllPending(root: string, sessionId: string): { snap: HeldSnapshot; meta: PendingMeta }[] {
  flushPending();
  const dir = join(stashDir(root), "pending");
  const prefix = `${safeName(sessionId)}~`;
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix) && n.endsWith(".json"));
  } catch {
    return [];
  }
  const out: { snap: HeldSnapshot; meta: PendingMeta }[] = [];
  for (const n of names) {
    const body = readJson<PendingFile>(join(dir, n));
    removeQuietly(join(dir, n));
    if (body?.v === 1 && body.snap && Array.isArray(body.snap.files))
      out.push({ snap: { ...body.snap, files: fromRows(body.snap.files) }, meta: body.meta });
  }
  return out.sort((a, b) => a.meta.at - b.meta.at);
}

/** A call of another session still running this long is taken as lost: its paths are compared between calls again. */
const IN_FLIGHT_MS = 10 * 60_000;

/**
 * The held paths that calls of other sessions, still running, watch: a
 * change there is their own check's to judge. Read only when a change was
 * found (it parses their snapshots).
 */
export function inFlightHeld(root: string, exceptSession: string, now: number): string[] {
  flushPending();
  const dir = join(stashDir(root), "pending");
  const mine = `${safeName(exceptSession)}~`;
  const out: string[] = [];
  try {
    for (const n of readdirSync(dir)) {
      if (n.startsWith(mine) || !n.endsWith(".json")) continue;
      const st = statSync(join(dir, n), { throwIfNoEntry: false });
      if (!st || now - st.mtimeMs > IN_FLIGHT_MS) continue;
      const body = readJson<PendingFile>(join(dir, n));
      if (Array.isArray(body?.snap?.held)) out.push(...body.snap.held);
    }
  } catch {
    /* no pending calls */
  }
  return out;
}
