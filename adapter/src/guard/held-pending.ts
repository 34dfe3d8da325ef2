import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { HeldFile, HeldSnapshot } from "./held-snapshot.js";
import { ensureStash, readJson, removeQuietly, safeName, stashDir, writeAtomic } from "./held-stash.js";

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

type FileRow = [string, number, string, string, string, number, string | null];

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
): void {
  const file = pendingFile(root, sessionId, callKey);
  const rows: FileRow[] = snap.files.map((f) => [f.path, f.size, f.mtime, f.ctime, f.ino, f.mode, f.key]);
  const body: PendingFile = { v: 1, sessionId, callKey, meta, snap: { ...snap, files: rows } };
  try {
    ensureStash(root);
    mkdirSync(join(file, ".."), { recursive: true });
    writeAtomic(file, JSON.stringify(body));
  } catch (err) {
    throw new Error(`Cohent could not keep the held-files snapshot (${file}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  dropStalePending(join(file, ".."), meta.at);
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
  const body = readJson<PendingFile>(file);
  removeQuietly(file);
  if (!body || body.v !== 1 || !body.snap || !Array.isArray(body.snap.files)) return null;
  const files = body.snap.files.map(([path, size, mtime, ctime, ino, mode, key]): HeldFile => ({
    path,
    size,
    mtime,
    ctime,
    ino,
    mode,
    key,
  }));
  return { snap: { ...body.snap, files }, meta: body.meta };
}
