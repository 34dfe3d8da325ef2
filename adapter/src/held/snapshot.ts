import { closeSync, fstatSync, openSync, readFileSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import {
  ensureStash,
  lstatQuiet,
  pruneStash,
  objectKeys,
  putPack,
  readSeen,
  seenStamp,
  sha256,
  stashDir,
  STASH_CAP,
  writeSeen,
  type SeenEntry,
} from "./stash.js";
import { claimsOf, walkHeld, type Walk } from "./walk.js";
import type { FsView } from "./live.js";

/**
 * What lies under peers' held paths before a shell call, and what the call
 * changed there. The snapshot stats every held file and keeps the bytes of
 * those it has not seen before (bounded), so that a change can be undone;
 * a file whose stat is unchanged since the last snapshot is not read again.
 */

export interface HeldFile {
  /** Repository-relative POSIX path. */
  path: string;
  size: number;
  mtime: string;
  /** ctime too: a rewrite that puts mtime back (touch -r, cp -p) still moves it. */
  ctime: string;
  ino: string;
  /** Permission bits, to recreate a deleted file as it was. */
  mode: number;
  /** sha256 of the bytes, kept in the stash; null when past the byte bound (caught, not restorable). */
  key: string | null;
}

export interface HeldSnapshot {
  v: 1;
  at: number;
  /** The held paths walked, normalized; compareHeld walks them again. */
  held: string[];
  files: HeldFile[];
  /** Literal held paths that did not exist: a creation there is caught. */
  absent: string[];
  /** False when the walk stopped at maxFiles (or 5× that many entries): creations are then only sought at absent paths. */
  complete: boolean;
  maxFiles: number;
  /** Files read (and bytes) in this call: 0 in the steady state. */
  read: number;
  bytesRead: number;
}

export interface HeldChange {
  path: string;
  change: "modified" | "deleted" | "created";
  /** The state before the call can be put back: bytes kept (modified, deleted), or a file to remove (created). */
  restorable: boolean;
  /** The key of the bytes before the call; null for a creation, or bytes past the bound. */
  before: string | null;
  /** Permission bits before the call (null for a creation). */
  mode: number | null;
  /**
   * The file after the call, so restore can tell whether it changed since:
   * "sha256:<hex>" of its bytes (within the byte bound), else "stat:<size:mtime:ctime:ino>";
   * null when deleted.
   */
  after: string | null;
}

export interface SnapshotOptions {
  /** How the walk reads folders and stats (held/live.ts): the disk, or a long-lived process's kept view. */
  view?: FsView;
  /** Bytes read and kept per file (default 8 MiB): a larger file gets key null (caught, not restorable). */
  maxBytes?: number;
  /** Files recorded (default 20,000); past it the snapshot is incomplete. */
  maxFiles?: number;
  now?: number;
  /** Bound of the stash's kept bytes (default 64 MiB). */
  stashCap?: number;
}

export const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 20_000;
const RACY_MS = 1_000;
/** A pack is written once its versions reach this many bytes (and at the end): memory stays bounded. */
const PACK_BYTES = 16 * 1024 * 1024;

export const statKey = (st: Stats): string => `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
const fileKey = (f: HeldFile): string => `${f.size}:${f.mtime}:${f.ctime}:${f.ino}`;

/**
 * A file's bytes with the stat they belong to: null when it changed while
 * being read (a writer is at it: no bytes to keep), or cannot be read.
 */
function readStable(abs: string, walked?: Stats): { bytes: Buffer; st: Stats } | null {
  let fd = -1;
  try {
    fd = openSync(abs, "r");
    // The walk's stat is the one before: one read of a byte more than it says, one fstat after. A first
    // snapshot reads hundreds of files; each syscall saved counts.
    if (walked?.isFile()) {
      const buf = Buffer.allocUnsafe(walked.size + 1);
      let n = 0;
      for (let r = 1; n < buf.length && r > 0; n += r) r = readSync(fd, buf, n, buf.length - n, n);
      const after = fstatSync(fd);
      if (n === walked.size && statKey(after) === statKey(walked))
        return { bytes: buf.subarray(0, n), st: after };
    }
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const bytes = readFileSync(fd);
    const again = fstatSync(fd);
    return statKey(again) === statKey(st) && bytes.length === st.size ? { bytes, st } : null;
  } catch {
    return null;
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

function heldFile(rel: string, st: Stats, key: string | null): HeldFile {
  return {
    path: rel,
    size: st.size,
    mtime: String(st.mtimeMs),
    ctime: String(st.ctimeMs),
    ino: String(st.ino),
    mode: st.mode & 0o7777,
    key,
  };
}

/** The last snapshot's files that read no bytes, with what they came from: the same walk and seen.json give the same files. */
let lastFiles: { walk: Walk; dir: string; maxBytes: number; seen: string | null; files: HeldFile[] } | null =
  null;

/**
 * Snapshots the files under `held` (repository-relative files, folders,
 * globs). Never throws: a stash that cannot be written leaves keys null.
 */
export function snapshotHeld(
  root: string,
  held: readonly string[],
  opts: SnapshotOptions = {},
): HeldSnapshot {
  const at = opts.now ?? Date.now();
  const maxFiles = opts.maxFiles ?? DEFAULT_MAX_FILES;
  // Per file, not per call: a file within the bound is always kept, whatever else the call holds
  // (the stash's total stays under STASH_CAP by pruning what no catch or pending call needs).
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const claims = claimsOf(held);
  const walk = walkHeld(root, claims, maxFiles, opts.view);
  const dir = stashDir(root);
  const base = { v: 1 as const, at, held: claims, absent: walk.absent, complete: walk.complete, maxFiles };
  // A long-lived guard's walk is the last one while nothing changed (held/walk.ts): so are its files.
  const stamp = lastFiles?.walk === walk ? seenStamp(dir) : null;
  if (
    lastFiles?.walk === walk &&
    lastFiles.dir === dir &&
    lastFiles.maxBytes === maxBytes &&
    lastFiles.seen === stamp
  )
    return { ...base, files: lastFiles.files, read: 0, bytesRead: 0 };
  const seen = walk.files.size ? readSeen(dir) : null;
  const fresh: Record<string, SeenEntry> = {};
  let stashOk: boolean | null = null;
  let read = 0;
  let bytesRead = 0;
  let written = 0;
  const files: HeldFile[] = [];
  // The new versions, written as packs of up to PACK_BYTES (held/stash.ts): one file each, not one per version.
  let batch: { key: string; bytes: Buffer; f: HeldFile }[] = [];
  let kept: Set<string> | undefined;
  let batchBytes = 0;
  const flush = () => {
    if (batch.length === 0) return;
    try {
      if (stashOk === null) ensureStash(root);
      written += putPack(dir, batch);
      stashOk = true;
    } catch {
      stashOk = false; // not writable: caught, not restorable
      for (const { f } of batch) {
        f.key = null;
        delete fresh[f.path];
      }
    }
    batch = [];
    batchBytes = 0;
  };
  for (const [rel, st] of walk.files) {
    const s = seen!.files[rel];
    const f = heldFile(rel, st, null);
    if (s && s[0] === f.size && s[1] === f.mtime && s[2] === f.ctime && s[3] === f.ino) f.key = s[4];
    else if (f.size <= maxBytes && stashOk !== false) {
      const got = readStable(join(root, rel), st);
      if (got) {
        read++;
        bytesRead += got.bytes.length;
        const key = sha256(got.bytes);
        Object.assign(f, heldFile(rel, got.st, key));
        kept ??= objectKeys(dir);
        if (!kept.has(key)) {
          batch.push({ key, bytes: got.bytes, f });
          batchBytes += got.bytes.length;
        }
        // "Racy" as in Git: a file changed in the last second may change again within one clock tick
        // (timestamps are coarse) with the same stat; it is read again next time rather than trusted.
        if (at - got.st.ctimeMs > RACY_MS) fresh[rel] = [f.size, f.mtime, f.ctime, f.ino, key];
        if (batchBytes >= PACK_BYTES) flush();
      }
    }
    files.push(f);
  }
  flush();
  if (written > 0 || Object.keys(fresh).length) {
    const after = writeSeen(dir, fresh, written, new Set(walk.files.keys()));
    const cap = opts.stashCap ?? STASH_CAP;
    if (after && after.bytes > cap)
      pruneStash(
        dir,
        files.flatMap((f) => (f.key ? [f.key] : [])),
        cap,
      );
  }
  lastFiles = read === 0 && written === 0 ? { walk, dir, maxBytes, seen: seenStamp(dir), files } : null;
  return { ...base, files, read, bytesRead };
}

/**
 * What changed under the held paths since `snap`: every recorded file whose
 * stat moved (a same-size change is re-hashed, within maxBytes, so a touch
 * is not a change), deleted, and files new under them. Never throws.
 */
export function compareHeld(
  root: string,
  snap: HeldSnapshot,
  opts: { maxBytes?: number } = {},
): HeldChange[] {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES; // per file, as in snapshotHeld
  // The state a change left, for restore to see whether the file changed again since: its hash when
  // cheap (a later touch or rename is no change), else its stat.
  const afterOf = (rel: string, st: Stats, hash?: string): string => {
    if (hash) return `sha256:${hash}`;
    if (st.size <= maxBytes) {
      const got = readStable(join(root, rel));
      if (got && statKey(got.st) === statKey(st)) {
        return `sha256:${sha256(got.bytes)}`;
      }
    }
    return `stat:${statKey(st)}`;
  };
  const walk = walkHeld(root, snap.held, snap.maxFiles);
  const changes: HeldChange[] = [];
  const before = new Set<string>();
  for (const f of snap.files) {
    before.add(f.path);
    let st = walk.files.get(f.path);
    if (!st && !walk.complete) {
      const s = lstatQuiet(join(root, f.path));
      if (s?.isFile()) st = s;
    }
    const base = { path: f.path, before: f.key, mode: f.mode, restorable: f.key !== null };
    if (!st) {
      changes.push({ ...base, change: "deleted", after: null });
      continue;
    }
    if (statKey(st) === fileKey(f)) continue;
    let hash: string | undefined;
    if (f.key && st.size === f.size && f.size <= maxBytes) {
      const got = readStable(join(root, f.path));
      if (got) hash = sha256(got.bytes);
      if (hash === f.key) continue; // same bytes: touched, or rewritten alike
    }
    changes.push({ ...base, change: "modified", after: afterOf(f.path, st, hash) });
  }
  for (const [rel, st] of walk.files) {
    if (before.has(rel)) continue;
    // An incomplete snapshot does not know what it left out: only its absent paths can be told created.
    if (!snap.complete && !snap.absent.some((a) => rel === a || rel.startsWith(`${a}/`))) continue;
    changes.push({
      path: rel,
      change: "created",
      restorable: true,
      before: null,
      mode: null,
      after: afterOf(rel, st),
    });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
