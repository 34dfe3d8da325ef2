import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { cohentCacheDir } from "@cohent/client";

/**
 * The V8 code cache of the adapter bundle, in the user's cache folder (never
 * in the repository: whoever can write it chooses the code that runs). Node
 * 20 has no module compile cache, so cohent.mjs compiles its bundle through
 * vm.Script with this as cachedData.
 *
 * V8 checks a cache's version and flags, but of the source only its length,
 * and it does not checksum the payload: a damaged cache aborts the process
 * (SIGTRAP), and a hook that aborts lets the tool call through. So the file
 * is named and headed by the bundle's sha256, holds the data twice, and is
 * handed to V8 only when both copies are byte-identical: one native memcmp,
 * where a checksum in JS costs ~0.7 ms and loading node:crypto ~5 ms.
 */

const MAGIC = "cohent-code-cache/1";
/** Fixed header size: the data starts 8-byte aligned. */
const HEADER = 128;

/**
 * Where the cache of the bundle with this hash lives for one code path (a
 * hook event and tool kind, or "cli": fast-path.ts), whose first run wrote
 * it with the functions it compiled; null when turned off
 * (COHENT_CODE_CACHE=0) or without a home (never relative to the checkout).
 */
export function codeCacheFile(
  hash: string,
  path = "cli",
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  if (/^(0|false|off|no)$/i.test(env.COHENT_CODE_CACHE?.trim() ?? "")) return null;
  const dir = cohentCacheDir(env);
  const safe = /^[A-Za-z-]{1,64}$/.test(path) ? path : "other";
  return isAbsolute(dir)
    ? join(dir, "code-cache", `${hash.slice(0, 32)}-${safe}-${process.versions.v8}-${process.arch}.bin`)
    : null;
}

/** Only the user's own cache is code to run: not another user's file, nor one that others may write. */
function ownedByUser(fd: number): boolean {
  if (!process.getuid) return true;
  const st = fstatSync(fd);
  return st.uid === process.getuid() && (st.mode & 0o022) === 0;
}

function header(hash: string, length: number): string {
  return `${MAGIC} ${hash} ${process.versions.v8} ${length}\n`.padEnd(HEADER, " ");
}

/** The cached data for this bundle, or undefined when absent, foreign, truncated or damaged. */
export function readCodeCache(file: string, hash: string): Buffer | undefined {
  let buf: Buffer;
  let fd: number | undefined;
  try {
    // One open: the file checked is the file read.
    fd = openSync(file, "r");
    if (!ownedByUser(fd)) return undefined;
    buf = readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (buf.length <= HEADER) return undefined;
  const [magic, h, v8, len] = buf.toString("latin1", 0, HEADER).trimEnd().split(" ");
  const n = Number(len);
  if (
    magic !== MAGIC ||
    h !== hash ||
    v8 !== process.versions.v8 ||
    !Number.isSafeInteger(n) ||
    n <= 0 ||
    buf.length !== HEADER + 2 * n
  )
    return undefined;
  const data = buf.subarray(HEADER, HEADER + n);
  return data.equals(buf.subarray(HEADER + n)) ? data : undefined;
}

/** Caches of other bundles (other checkouts, older versions) untouched this long are removed when a cache is written. */
export const STALE_MS = 30 * 24 * 3600_000;

/** Writes the cache atomically (a temporary file, then rename); a cache that cannot be written is skipped. */
export function writeCodeCache(file: string, hash: string, data: Buffer, now = Date.now()): boolean {
  const dir = dirname(file);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, Buffer.concat([Buffer.from(header(hash, data.length), "latin1"), data, data]), {
      mode: 0o600,
    });
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
    return false;
  }
  for (const name of readdirSync(dir)) {
    if (name === basename(file)) continue;
    try {
      if (now - statSync(join(dir, name)).mtimeMs > STALE_MS) rmSync(join(dir, name), { force: true });
    } catch {
      /* gone already */
    }
  }
  return true;
}
