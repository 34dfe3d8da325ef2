import { closeSync, openSync, readFileSync, readSync, statSync, type Stats } from "node:fs";
import { join, resolve } from "node:path";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import { lockFile, crypto } from "@cohent/client";
import {
  ensureStash,
  lstatQuiet,
  putObject,
  readJson,
  safeName,
  sha256,
  stashDir,
  writeAtomic,
} from "../held/stash.js";

/**
 * What each session last read of each file (stale-write.ts): the bytes'
 * sha256, with the stat they had, kept per session in the checkout's stash
 * (<stash>/reads/<session>.json). The hash is what a later write is
 * compared with; the stat only spares hashing a file that did not change.
 * The bytes themselves go to the stash's objects (within a bound), so that
 * a refusal can name the lines that changed since.
 *
 * Sources: a read tool's PostToolUse and the session's own write replace
 * what the session knew of a file (its own write is its latest read), and
 * so do the files a shell command names (read-shell.ts: `cat src/x.ts`); a
 * claim's grant only adds files the session had not read, since a grant is
 * not the model seeing the bytes (a grant after a peer's edit must not make
 * the peer's change look read).
 */

/**
 * [size, mtimeMs, ctimeMs, sha256, when read (ms), when the stat was taken
 * (ms; the read's time when absent)]. A check that finds the same bytes
 * under a new stat (a touch) takes the new stat, not a new read time.
 */
export type ReadEntry = [number, number, number, string, number, number?];

interface ReadRecord {
  v: 1;
  files: Record<string, ReadEntry>;
}

export type ReadSource = "read" | "write" | "grant";

/** Does this source replace what the session knew of the file, or only add a file it did not know? */
const replaces = (source: ReadSource) => source === "read" || source === "write";

/** Files past this are not recorded: never refused (hashing them would cost the edit's hook too much). */
export const READ_MAX_BYTES = 8 * 1024 * 1024;
/** Bytes kept for the changed-lines diff of a refusal; a larger file's refusal names no lines. */
export const READ_KEEP_BYTES = 1024 * 1024;
/** Entries per session; the oldest reads go first. */
const READS_MAX = 1_000;
/** As in held/snapshot.ts: a file changed within a second of its read may change again within one clock tick with the same stat. */
export const RACY_MS = 1_000;

export const readsFile = (root: string, sessionId: string) =>
  join(stashDir(root), "reads", `${safeName(sessionId)}.json`);

/** Records as last parsed, per file, while the file is unchanged (a long-lived guard checks every edit). */
const cache = new Map<string, { stamp: string; files: Record<string, ReadEntry> }>();

/** The session's read record (path → entry); empty when it read nothing. Do not change the answer. */
export function readRecord(root: string, sessionId: string): Readonly<Record<string, ReadEntry>> {
  return recordAt(readsFile(root, sessionId));
}

function recordAt(file: string): Record<string, ReadEntry> {
  const st = lstatQuiet(file);
  if (!st) return {};
  const stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const hit = cache.get(file);
  if (hit?.stamp === stamp) return hit.files;
  const r = readJson<ReadRecord>(file);
  const files = r?.v === 1 && r.files && typeof r.files === "object" ? r.files : {};
  if (cache.size > 64) cache.clear();
  cache.set(file, { stamp, files });
  return files;
}

/** The record's text as last read, per file, with the entries looked up in it so far. */
const texts = new Map<string, { stamp: string; text: string; found: Map<string, ReadEntry | undefined> }>();

/**
 * What the session last read of one file, found in the record's text
 * without parsing all of it: a command hook checks one or two targets of a
 * record of up to 1,000 files (parsing it whole costs ~1 ms at 500).
 */
export function readEntry(root: string, sessionId: string, path: string): ReadEntry | undefined {
  const file = readsFile(root, sessionId);
  const st = lstatQuiet(file);
  if (!st) return undefined;
  const stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const parsed = cache.get(file);
  if (parsed?.stamp === stamp) return parsed.files[path];
  let t = texts.get(file);
  if (t?.stamp !== stamp) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
    if (texts.size > 64) texts.clear();
    t = { stamp, text, found: new Map() };
    texts.set(file, t);
  }
  if (t.found.has(path)) return t.found.get(path);
  const e = entryIn(t.text, path);
  t.found.set(path, e);
  return e;
}

/** The entry of `path` in a record's JSON text (JSON.stringify wrote it: a key is a quoted path after "{" or ","). */
function entryIn(text: string, path: string): ReadEntry | undefined {
  const needle = `${JSON.stringify(path)}:[`;
  let i = text.indexOf(needle);
  while (i > 0 && text[i - 1] !== "{" && text[i - 1] !== ",") i = text.indexOf(needle, i + 1);
  if (i <= 0) return undefined;
  const from = i + needle.length - 1;
  const to = text.indexOf("]", from);
  try {
    const e = JSON.parse(text.slice(from, to + 1)) as ReadEntry;
    return Array.isArray(e) && typeof e[3] === "string" && typeof e[4] === "number" ? e : undefined;
  } catch {
    return undefined;
  }
}

/** A repository path of `p` (absolute, or relative to `base`), or null outside the repository. */
export function repoPathOf(root: string, p: string, base = root): string | null {
  try {
    const rel = normalizeRepoPath(resolve(base, p), root);
    return rel === "**" ? null : rel;
  } catch {
    return null;
  }
}

/** Whether a recorded stat still vouches for the bytes: same size and times, and not recorded within a tick of the change. */
export const statVouches = (e: ReadEntry, st: Pick<Stats, "size" | "mtimeMs" | "ctimeMs">) =>
  e[0] === st.size && e[1] === st.mtimeMs && e[2] === st.ctimeMs && (e[5] ?? e[4]) - st.ctimeMs > RACY_MS;

/** One buffer for every hash of the process: a 1 MB file read whole costs more in allocation than in hashing. */
let chunk: Buffer | null = null;

/** The sha256 of a file's bytes, read in chunks; null when it cannot be read. */
export function hashFile(abs: string): string | null {
  let fd = -1;
  try {
    fd = openSync(abs, "r");
    chunk ??= Buffer.allocUnsafe(256 * 1024);
    const h = crypto().createHash("sha256");
    for (
      let n = readSync(fd, chunk, 0, chunk.length, null);
      n > 0;
      n = readSync(fd, chunk, 0, chunk.length, null)
    )
      h.update(chunk.subarray(0, n));
    return h.digest("hex");
  } catch {
    return null;
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

/**
 * After a check found the same bytes under a new stat: the new stat is kept,
 * so that the next check of the file is a stat again (not while it is
 * racy). The read's time stays. Skipped while another process holds the
 * record's lock: the check is never made to wait.
 */
export function refreshStat(
  root: string,
  sessionId: string,
  path: string,
  st: Stats,
  now = Date.now(),
): void {
  if (now - st.ctimeMs <= RACY_MS) return;
  const file = readsFile(root, sessionId);
  try {
    const unlock = lockFile(file, false);
    if (!unlock) return;
    try {
      const files = { ...recordAt(file) };
      const e = files[path];
      if (!e) return;
      files[path] = [st.size, st.mtimeMs, st.ctimeMs, e[3], e[4], now];
      writeAtomic(file, JSON.stringify({ v: 1, files } satisfies ReadRecord));
    } finally {
      unlock();
    }
  } catch {
    /* the next check hashes again */
  }
}

/**
 * One file as it is now: its entry (hashing only when the stat does not
 * vouch for `known`), or null when it is no file within the bound. `keepIn`:
 * the stash to keep the bytes in (for a refusal's changed lines), if any.
 */
export function entryNow(
  abs: string,
  known: ReadEntry | undefined,
  at: number,
  keepIn: string | null,
): ReadEntry | null {
  let st: Stats | undefined;
  try {
    st = statSync(abs, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  if (!st?.isFile() || st.size > READ_MAX_BYTES) return null;
  if (known && statVouches(known, st)) return [st.size, st.mtimeMs, st.ctimeMs, known[3], at];
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch {
    return null;
  }
  let key: string;
  try {
    key = keepIn && bytes.length <= READ_KEEP_BYTES ? putObject(keepIn, bytes).key : sha256(bytes);
  } catch {
    key = sha256(bytes);
  }
  // A write between the stat and the read: the stat is not the bytes', so it must not vouch for them later.
  return bytes.length === st.size ? [st.size, st.mtimeMs, st.ctimeMs, key, at] : [-1, 0, 0, key, at];
}

/** A file as another part already hashed it (the shell watch's snapshot): no read here. */
export interface KnownFile {
  path: string;
  size: number;
  mtime: number | string;
  ctime: number | string;
  /** sha256 of the bytes; null when the snapshot did not keep them (past its bound): not recorded. */
  key: string | null;
}

/**
 * Records that `sessionId` read (or wrote) `paths` (absolute, or relative
 * to `cwd`, default the checkout's root): each file's hash and stat now.
 * Answers each path recorded with its key (null: no file, or past the
 * bound, and forgotten). Never throws: a lost record can only spare a
 * stale write its refusal.
 */
export function recordRead(
  root: string,
  sessionId: string,
  paths: string | readonly string[],
  source: ReadSource,
  opts: { cwd?: string; at?: number } = {},
): { path: string; key: string | null }[] {
  const at = opts.at ?? Date.now();
  const rels = new Set<string>();
  for (const p of typeof paths === "string" ? [paths] : paths) {
    const rel = typeof p === "string" && p ? repoPathOf(root, p, opts.cwd ?? root) : null;
    if (rel) rels.add(rel);
  }
  if (rels.size === 0) return [];
  try {
    const known = recordAt(readsFile(root, sessionId));
    const fresh: Record<string, ReadEntry | null> = {};
    const dir = ensureStash(root);
    for (const rel of rels) {
      if (!replaces(source) && known[rel]) continue;
      // A file gone or past the bound: what the session knew of it is dropped (a later write of it is not judged).
      fresh[rel] = entryNow(join(root, rel), known[rel], at, dir);
    }
    merge(root, sessionId, fresh, source);
    return Object.entries(fresh).map(([path, e]) => ({ path, key: e?.[3] ?? null }));
  } catch {
    return [];
  }
}

/** Records files whose hash and stat another part already has (the shell watch's snapshot). Never throws. */
export function recordKnown(
  root: string,
  sessionId: string,
  files: readonly KnownFile[],
  source: ReadSource,
  at = Date.now(),
): number {
  const fresh: Record<string, ReadEntry> = {};
  const known = recordAt(readsFile(root, sessionId));
  for (const f of files) {
    if (!f.key) continue;
    // The same bytes and stat as already recorded: no write (a long-lived guard's command naming a file call after call).
    const k = known[f.path];
    if (k && k[0] === f.size && k[1] === Number(f.mtime) && k[2] === Number(f.ctime) && k[3] === f.key)
      continue;
    fresh[f.path] = [f.size, Number(f.mtime), Number(f.ctime), f.key, at];
  }
  if (Object.keys(fresh).length === 0) return 0;
  try {
    return merge(root, sessionId, fresh, source);
  } catch {
    return 0;
  }
}

/** Forgets files (a session's own deletion): a file it never read is never refused. */
export function forgetReads(root: string, sessionId: string, paths: readonly string[]): void {
  const fresh: Record<string, null> = {};
  for (const p of paths) fresh[p] = null;
  try {
    merge(root, sessionId, fresh, "write");
  } catch {
    /* see recordRead */
  }
}

/** Merges entries (null: forget the path) into the record on disk, under its lock. */
function merge(
  root: string,
  sessionId: string,
  fresh: Record<string, ReadEntry | null>,
  source: ReadSource,
): number {
  const file = readsFile(root, sessionId);
  ensureStash(root);
  const unlock = lockFile(file);
  let n = 0;
  try {
    const files = { ...recordAt(file) };
    for (const [rel, e] of Object.entries(fresh)) {
      if (!replaces(source) && files[rel]) continue;
      if (e) files[rel] = e;
      else delete files[rel];
      n++;
    }
    const paths = Object.keys(files);
    if (paths.length > READS_MAX)
      for (const p of paths.sort((a, b) => files[a]![4] - files[b]![4]).slice(0, paths.length - READS_MAX))
        delete files[p];
    writeAtomic(file, JSON.stringify({ v: 1, files } satisfies ReadRecord));
  } finally {
    unlock();
  }
  return n;
}
