import { chmodSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ensureStash, getObject, lstatQuiet, putObject, removeQuietly, stashDir } from "./stash.js";
import { isJsonSettings, touchesGuard } from "./settings-change.js";

/**
 * The guard's files outside the checkout (host-settings.ts: the clients'
 * user and machine settings), around a watched call: their state before it
 * (bytes kept in the stash), compared after it. A change that touches the
 * guard (held/settings-change.ts) is put back at once: a switch such as
 * Claude Code's `disableAllHooks`, re-read mid-session, must not outlive
 * the call that wrote it. Bounded: a folder is walked to a few levels and
 * files, a file past the byte bound is compared by its stat and removed or
 * left, never rewritten from nothing.
 */

/** [size, mtime, ctime, ino, mode, key]: key null past the byte bound or unreadable. */
export type OutsideRow = [number, number, number, number, number, string | null];
export type OutsideState = Record<string, OutsideRow>;

const MAX_FILES = 400;
const MAX_DEPTH = 4;
const MAX_BYTES = 1024 * 1024;

const rowOf = (
  st: { size: number; mtimeMs: number; ctimeMs: number; ino: number; mode: number },
  key: string | null,
): OutsideRow => [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode & 0o7777, key];
const sameStat = (a: OutsideRow, b: OutsideRow) =>
  a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];

/** The files at these absolute places (a folder ends with "/"), their bytes kept when new since `seen`. */
export function snapshotOutside(
  root: string,
  places: readonly string[],
  seen: OutsideState = {},
): OutsideState {
  const out: OutsideState = {};
  let dir: string | null = null;
  const add = (abs: string) => {
    if (Object.keys(out).length >= MAX_FILES) return;
    const st = lstatQuiet(abs);
    if (!st?.isFile()) return;
    const was = seen[abs];
    let key: string | null = null;
    if (was && sameStat(was, rowOf(st, null))) key = was[5];
    else if (st.size <= MAX_BYTES) {
      try {
        dir ??= ensureStash(root);
        key = putObject(dir, readFileSync(abs)).key;
      } catch {
        key = null;
      }
    }
    out[abs] = rowOf(st, key);
  };
  const walk = (d: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      if (n === "node_modules" || n === ".git") continue;
      const abs = join(d, n);
      const st = lstatQuiet(abs);
      if (st?.isDirectory()) {
        if (depth < MAX_DEPTH) walk(abs, depth + 1);
      } else add(abs);
    }
  };
  for (const p of places) {
    if (p.endsWith("/")) walk(p.slice(0, -1), 1);
    else add(p);
  }
  return out;
}

export interface OutsideChange {
  path: string;
  change: "modified" | "deleted" | "created";
  /** Put back as it was before the call. */
  undone: boolean;
}

function textOf(root: string, key: string | null): string | null {
  if (!key) return null;
  const bytes = getObject(stashDir(root), key);
  return bytes ? bytes.toString("utf8") : null;
}

function putBack(abs: string, bytes: Buffer, mode: number): boolean {
  const tmp = join(dirname(abs), `.${basename(abs)}.cohent-undo-${process.pid}.tmp`);
  try {
    writeFileSync(tmp, bytes, { mode });
    chmodSync(tmp, mode);
    renameSync(tmp, abs);
    return true;
  } catch {
    removeQuietly(tmp);
    return false;
  }
}

/**
 * What the call changed among them that touches the guard, each put back
 * at once: a modified or deleted file gets its bytes from before, a created
 * one is removed. A harmless change (a permission a person granted) is
 * left as it is.
 */
export function undoOutside(root: string, before: OutsideState, places: readonly string[]): OutsideChange[] {
  const after = snapshotOutside(root, places, before);
  const out: OutsideChange[] = [];
  for (const [abs, was] of Object.entries(before)) {
    const now = after[abs];
    if (now && (sameStat(was, now) || (was[5] !== null && was[5] === now[5]))) continue;
    const beforeText = textOf(root, was[5]);
    const afterText = now ? textOf(root, now[5]) : null;
    const json = isJsonSettings(abs);
    if (
      beforeText !== null &&
      (now === undefined || afterText !== null) &&
      !touchesGuard(beforeText, afterText, json)
    )
      continue;
    const bytes = was[5] ? getObject(stashDir(root), was[5]) : null;
    out.push({
      path: abs,
      change: now ? "modified" : "deleted",
      undone: bytes !== null && putBack(abs, bytes, was[4]),
    });
  }
  for (const [abs, now] of Object.entries(after)) {
    if (before[abs]) continue;
    const afterText = textOf(root, now[5]);
    if (afterText !== null && !touchesGuard(null, afterText, isJsonSettings(abs))) continue;
    out.push({ path: abs, change: "created", undone: removeQuietly(abs) });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}
