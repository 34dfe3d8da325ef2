import {
  closeSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { crypto, lockFile } from "@cohent/client";

/**
 * The held-files stash: per checkout, outside the work tree. It keeps the
 * bytes of peers' held files as they were before a shell call (content-
 * addressed), the last stat seen of each (so a steady-state snapshot only
 * stats), the pending snapshot between a call's Pre and Post hooks, the
 * catches journal and the guarded-edit journal.
 *
 *   <git dir>/cohent/held/       (no Git dir: <root>/.cohent/held/, ignoring itself)
 *     objects/<sha256>           bytes of one file version, immutable
 *     packs/<id>.pack, <id>.idx  many versions in one file (a snapshot's new files), and where each lies
 *     seen.json                  { v, bytes, files: { rel: [size, mtime, ctime, ino, key] } }
 *     pending/<session>~<call>.json
 *     catches.json               { v, catches: Catch[] }, newest last
 *     kept/<catch>/<path>        a file's version that a restore replaced (edited since the catch)
 *     edits.log                  one JSON line per guarded edit start/end
 */

/** The stash folder of a checkout (not created here). */
export function stashDir(root: string): string {
  const git = join(root, ".git");
  try {
    const st = statSync(git, { throwIfNoEntry: false });
    if (st?.isDirectory()) return join(git, "cohent", "held");
    if (st?.isFile()) {
      // A worktree or submodule: ".git" is a file naming the checkout's own Git dir.
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(git, "utf8"));
      if (m) {
        const dir = resolve(root, m[1]!);
        if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return join(dir, "cohent", "held");
      }
    }
  } catch {
    /* unreadable: the fallback */
  }
  return join(root, ".cohent", "held");
}

/** Creates the stash folder; the fallback inside the work tree ignores itself so that it is never committed. */
export function ensureStash(root: string): string {
  const dir = stashDir(root);
  mkdirSync(join(dir, "objects"), { recursive: true });
  if (dir === join(root, ".cohent", "held")) {
    const ignore = join(dir, ".gitignore");
    if (!statSync(ignore, { throwIfNoEntry: false })) writeFileSync(ignore, "*\n");
  }
  return dir;
}

/** Write a complete file under a temporary name, then rename: readers never see half of it. */
export function writeAtomic(file: string, data: string | Uint8Array, mode?: number): void {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, data, mode === undefined ? undefined : { mode });
    renameSync(tmp, file);
  } catch (err) {
    removeQuietly(tmp);
    throw err;
  }
}

/** lstat that answers undefined for any error too (ENOTDIR under a file, EACCES, ELOOP): such a path holds no file to keep. */
export function lstatQuiet(abs: string): Stats | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

export function removeQuietly(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

export function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

/** A file name for an untrusted id: itself when plain and short, else a 64-bit FNV-1a hash (no crypto load on the hot path). */
export function safeName(id: string): string {
  if (/^[A-Za-z0-9._-]{1,80}$/.test(id)) return `s${id}`;
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 + 0x100) >>> 0;
  }
  return `h${a.toString(16).padStart(8, "0")}${b.toString(16).padStart(8, "0")}`;
}

export const objectPath = (dir: string, key: string) => join(dir, "objects", key);

export const sha256 = (bytes: Uint8Array): string =>
  crypto().createHash("sha256").update(bytes).digest("hex");

/** Keeps one file version's bytes; answers its key and how many bytes were newly written (0 when already kept). */
export function putObject(dir: string, bytes: Uint8Array): { key: string; written: number } {
  const key = sha256(bytes);
  const file = objectPath(dir, key);
  if (statSync(file, { throwIfNoEntry: false })?.size === bytes.length) return { key, written: 0 };
  writeAtomic(file, bytes);
  return { key, written: bytes.length };
}

/** A kept version's bytes, or null when it is not (or no longer) in the stash or was altered. */
export function getObject(dir: string, key: string): Buffer | null {
  try {
    const bytes = readFileSync(objectPath(dir, key));
    if (sha256(bytes) === key) return bytes;
  } catch {
    /* not a loose object: in a pack, perhaps */
  }
  // Another process may have packed it since this one last listed the packs: one fresh look.
  const at = packIndex(dir).get(key) ?? packIndex(dir, true).get(key);
  if (!at) return null;
  let fd = -1;
  try {
    fd = openSync(join(packsDir(dir), at.pack), "r");
    const bytes = Buffer.alloc(at.len);
    if (readSync(fd, bytes, 0, at.len, at.off) !== at.len) return null;
    return sha256(bytes) === key ? bytes : null;
  } catch {
    return null;
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

/** Whether the stash keeps this version (loose or packed): then it need not be written again. */
export function hasObject(dir: string, key: string): boolean {
  return (
    packIndex(dir).has(key) || statSync(objectPath(dir, key), { throwIfNoEntry: false })?.isFile() === true
  );
}

/**
 * Packs: the new versions one snapshot keeps, written as one file
 * (packs/<id>.pack) and its index (packs/<id>.idx: [key, offset, length]
 * rows, written last: a pack without one is not read). A first snapshot
 * of hundreds of files then creates two files, not hundreds: on this
 * machine's file system each creation, not the bytes, was the cost.
 */
const packsDir = (dir: string) => join(dir, "packs");

type PackRow = [string, number, number];
interface PackAt {
  pack: string;
  off: number;
  len: number;
}

/** The packs' index as last read, while the folder's stamp stands (a long-lived guard reads it at every restore). */
let packs: { dir: string; stamp: string; index: Map<string, PackAt> } | null = null;

function packIndex(dir: string, fresh = false): Map<string, PackAt> {
  const st = lstatQuiet(packsDir(dir));
  if (!st) return new Map();
  const stamp = `${st.ino}:${st.mtimeMs}`;
  if (!fresh && packs?.dir === dir && packs.stamp === stamp) return packs.index;
  const index = new Map<string, PackAt>();
  try {
    for (const n of readdirSync(packsDir(dir))) {
      if (!n.endsWith(".idx")) continue;
      const pack = `${n.slice(0, -".idx".length)}.pack`;
      for (const [key, off, len] of readJson<PackRow[]>(join(packsDir(dir), n)) ?? [])
        index.set(key, { pack, off, len });
    }
  } catch {
    /* no packs */
  }
  packs = { dir, stamp, index };
  return index;
}

/** Every version the stash keeps, loose or packed: one listing, where a snapshot reading many files would stat each. */
export function objectKeys(dir: string, fresh = false): Set<string> {
  const keys = new Set(packIndex(dir, fresh).keys());
  try {
    for (const n of readdirSync(join(dir, "objects"))) if (!n.endsWith(".tmp")) keys.add(n);
  } catch {
    /* none */
  }
  return keys;
}

/** Every version the stash keeps (doctor and the tests count them). */
export const keptKeys = (dir: string): string[] => [...objectKeys(dir, true)];

/** Keeps these versions as one pack; answers the bytes written. Throws when it cannot (the caller keeps no keys then). */
export function putPack(dir: string, items: readonly { key: string; bytes: Uint8Array }[]): number {
  if (items.length === 0) return 0;
  const index = packIndex(dir);
  const rows: PackRow[] = [];
  const parts: Uint8Array[] = [];
  const taken = new Set<string>();
  let off = 0;
  for (const { key, bytes } of items) {
    if (index.has(key) || taken.has(key)) continue;
    taken.add(key);
    rows.push([key, off, bytes.length]);
    parts.push(bytes);
    off += bytes.length;
  }
  if (rows.length === 0) return 0;
  mkdirSync(packsDir(dir), { recursive: true });
  const id = `${Date.now().toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  writeAtomic(join(packsDir(dir), `${id}.pack`), Buffer.concat(parts, off));
  writeAtomic(join(packsDir(dir), `${id}.idx`), JSON.stringify(rows));
  // Kept as the folder now stands; a pack another process wrote meanwhile is found by getObject's fresh look.
  for (const [key, o, len] of rows) index.set(key, { pack: `${id}.pack`, off: o, len });
  const st = lstatQuiet(packsDir(dir));
  if (st) packs = { dir, stamp: `${st.ino}:${st.mtimeMs}`, index };
  return off;
}

/** One file's last-seen stat and content key: [size, mtime, ctime, ino, key]. */
export type SeenEntry = [number, string, string, string, string];

export interface Seen {
  v: 1;
  /** Approximate bytes in objects/ (added to at each write, recounted by prune). */
  bytes: number;
  files: Record<string, SeenEntry>;
}

/** seen.json as last parsed, kept while the file is unchanged (a long-lived guard reads it every call). */
let seenCache: { file: string; stamp: string; seen: Seen } | null = null;

/** seen.json's stamp (inode, size, mtime), null when there is none: a snapshot over unchanged files is reused while it stands. */
export function seenStamp(dir: string): string | null {
  const st = lstatQuiet(join(dir, "seen.json"));
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : null;
}

export function readSeen(dir: string): Seen {
  const file = join(dir, "seen.json");
  const stamp = seenStamp(dir);
  if (stamp && seenCache?.file === file && seenCache.stamp === stamp)
    return structuredCloneSeen(seenCache.seen);
  const s = readJson<Seen>(file);
  const seen =
    s && s.v === 1 && s.files && typeof s.files === "object" ? s : { v: 1 as const, bytes: 0, files: {} };
  if (stamp) seenCache = { file, stamp, seen: structuredCloneSeen(seen) };
  return seen;
}

/** A copy the caller may change (writeSeen merges into it). Entries are arrays of plain values: shallow per entry. */
const structuredCloneSeen = (s: Seen): Seen => ({ v: 1, bytes: s.bytes, files: { ...s.files } });

/**
 * Entries past this (or twice the current snapshot's files) are dropped,
 * those not in the current snapshot: every watched call parses seen.json,
 * so it stays near the held set's size (a path held again is read once more).
 */
const SEEN_MAX = 2_000;

/**
 * Merges this call's new entries into seen.json as it is now on disk (a
 * parallel hook may have written meanwhile), under the lock prune takes.
 * `keep`: the paths of the current snapshot. Best effort: when it cannot
 * write, the next snapshot reads those files again.
 */
export function writeSeen(
  dir: string,
  fresh: Record<string, SeenEntry>,
  added: number,
  keep: ReadonlySet<string>,
): Seen | null {
  try {
    const unlock = lockFile(join(dir, "seen.json"))!;
    try {
      const seen = readSeen(dir);
      Object.assign(seen.files, fresh);
      seen.bytes += added;
      const paths = Object.keys(seen.files);
      if (paths.length > Math.max(SEEN_MAX, 2 * keep.size))
        for (const p of paths) if (!keep.has(p)) delete seen.files[p];
      writeAtomic(join(dir, "seen.json"), JSON.stringify(seen));
      return seen;
    } finally {
      unlock();
    }
  } catch {
    return null;
  }
}

/** Default bound of objects/: past it, prune (bytes a catch or a pending call refers to are kept). */
export const STASH_CAP = 64 * 1024 * 1024;
/** An unreferenced object younger than this may belong to a snapshot a parallel hook is still taking. */
const PRUNE_GRACE_MS = 2 * 60_000;

/** The content keys restore may still need: those of the catches journal and of pending snapshots. */
function referencedKeys(dir: string, into: Set<string>): void {
  const journal = readJson<{ catches?: { changes?: { before?: string | null; after?: string | null }[] }[] }>(
    join(dir, "catches.json"),
  );
  for (const c of journal?.catches ?? [])
    for (const ch of c.changes ?? []) {
      if (ch.before) into.add(ch.before);
      // The bytes the caught call left: restore merges a later edit against them.
      if (ch.after?.startsWith("sha256:")) into.add(ch.after.slice("sha256:".length));
    }
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, "pending"));
  } catch {
    /* none */
  }
  for (const n of names) {
    // A pending snapshot's files are rows [path, size, mtime, ctime, ino, mode, key] (held/snapshot.ts).
    const p = readJson<{ snap?: { files?: unknown[][] } }>(join(dir, "pending", n));
    for (const f of p?.snap?.files ?? []) if (typeof f[6] === "string") into.add(f[6]);
  }
}

/**
 * Brings objects/ under `cap` bytes: unreferenced objects first, then those
 * only seen.json refers to (their entries go, so the next snapshot reads
 * the file again), oldest first. Never removes an object a catch, a pending
 * call or `keep` (the snapshot being taken) refers to, so the stash can stay
 * over the cap when those alone exceed it. Best effort, skipped while
 * another process holds seen.json's lock.
 */
export function pruneStash(dir: string, keep: Iterable<string> = [], cap = STASH_CAP): void {
  let unlock: (() => void) | null = null;
  try {
    unlock = lockFile(join(dir, "seen.json"), false);
    if (!unlock) return;
    const held = new Set(keep);
    referencedKeys(dir, held);
    // A loose object is one key; a pack, all of its keys (kept or dropped together).
    const objects: { keys: string[]; size: number; mtime: number; files: string[] }[] = [];
    let total = 0;
    for (const key of readdirSync(join(dir, "objects"))) {
      const st = statSync(objectPath(dir, key), { throwIfNoEntry: false });
      if (!st?.isFile() || key.endsWith(".tmp")) continue;
      objects.push({ keys: [key], size: st.size, mtime: st.mtimeMs, files: [objectPath(dir, key)] });
      total += st.size;
    }
    for (const n of lstatQuiet(packsDir(dir)) ? readdirSync(packsDir(dir)) : []) {
      if (!n.endsWith(".idx")) continue;
      const pack = join(packsDir(dir), `${n.slice(0, -".idx".length)}.pack`);
      const st = statSync(pack, { throwIfNoEntry: false });
      const rows = readJson<PackRow[]>(join(packsDir(dir), n)) ?? [];
      if (!st) continue;
      objects.push({
        keys: rows.map((r) => r[0]),
        size: st.size,
        mtime: st.mtimeMs,
        files: [join(packsDir(dir), n), pack],
      });
      total += st.size;
    }
    const seen = readSeen(dir);
    const seenKeys = new Set(Object.values(seen.files).map((e) => e[4]));
    objects.sort((a, b) => a.mtime - b.mtime);
    const now = Date.now();
    const dropped = new Set<string>();
    for (const tier of [1, 2]) {
      for (const o of objects) {
        if (total <= cap) break;
        if (o.keys.some((k) => held.has(k)) || o.keys.every((k) => dropped.has(k))) continue;
        const young = now - o.mtime < PRUNE_GRACE_MS;
        if (o.keys.some((k) => seenKeys.has(k)) ? tier === 1 : young) continue;
        // The index first: a pack without one is never read.
        if (o.files.map((f) => removeQuietly(f)).every(Boolean)) {
          total -= o.size;
          for (const k of o.keys) dropped.add(k);
        }
      }
    }
    for (const [p, e] of Object.entries(seen.files)) if (dropped.has(e[4])) delete seen.files[p];
    seen.bytes = total;
    writeAtomic(join(dir, "seen.json"), JSON.stringify(seen));
  } catch {
    /* housekeeping only */
  } finally {
    unlock?.();
  }
}
