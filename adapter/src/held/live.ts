import { readdirSync, watch, type Dirent, type FSWatcher, type Stats } from "node:fs";
import { lstatQuiet } from "./stash.js";

/**
 * The held files' state kept fresh in a long-lived guard process (Claude
 * Code's MCP server, the warm guard, OpenCode's plugin: hook-in-process.ts
 * turns it on): each folder the watch lists or stats in is watched with
 * the kernel's notifications (inotify on Linux), and a listing or a stat is
 * taken again only after an event in its folder. So a call costs what
 * changed, not what is held. A command hook's process lives for one call:
 * it reads the disk (the direct view).
 *
 * What notifications miss: a write through a hard link made in a folder
 * that is not watched, and writes made while the queue overflowed. So the
 * whole state is taken again from the disk once a minute whatever the
 * events say, and a folder that cannot be watched (the user's limit on
 * watches reached) is read every time.
 */

export interface FsView {
  readdir(abs: string): Dirent[];
  lstat(abs: string): Stats | undefined;
  /**
   * A number that stays the same while nothing this view answered can have
   * changed (no event, no reread, no read past the watched folders): a walk
   * made between two equal readings may be reused. Absent: no such promise.
   */
  version?(): number;
}

/** The adapter's own per-machine state under .cohent/: written at every call, never held (held/walk.ts). */
export const OWN_STATE = ["held", "spawn-free"];
export const ownState = (name: string) => name.startsWith("runtime.json") || OWN_STATE.includes(name);

/** The checkouts' own .cohent/ folders (absolute) the walks went through: their session state is no event. */
const ownDirs = new Set<string>();
export const noteCheckout = (root: string) => void ownDirs.add(`${root}/.cohent`);

/** Every call reads the disk. */
export const DIRECT: FsView = {
  readdir: (abs) => readdirSync(abs, { withFileTypes: true }),
  lstat: lstatQuiet,
};

interface Folder {
  watcher: FSWatcher | null;
  /** The listing, while no event since. */
  entries: Dirent[] | null;
  /** Not there (or not a folder) when last looked: its nearest watched ancestor tells when it comes. */
  missing?: true;
}

/** Past this many watched folders, the rest are read every time (the default inotify limit is 8,192 per user, shared). */
const MAX_WATCHED = 2_000;
const FULL_EVERY_MS = 60_000;

let enabled = false;
let fullAt = 0;
const folders = new Map<string, Folder>();
const stats = new Map<string, Stats | undefined>();

/** Turns the live view on for this process (a long-lived guard). */
export function enableLiveView(): void {
  enabled = true;
}

/** Whether this process is a long-lived guard with the live view on. */
export const liveViewOn = () => enabled;

/** Moves at every event, reset and read the view could not keep (held/walk.ts reuses a walk while it stands still). */
let generation = 0;

/** Forgets everything kept: the next walk reads the disk. */
export function resetLiveView(): void {
  generation++;
  for (const f of folders.values()) f.watcher?.close();
  folders.clear();
  stats.clear();
}

const parentOf = (abs: string) => abs.slice(0, Math.max(1, abs.lastIndexOf("/")));

let events = 0;
/** How many notifications arrived so far: a long-lived guard looks between calls only when this moved. */
export const liveEvents = () => events;

/** An event in `dir` about `name` (null: unknown): what it may have changed is read again. */
function invalidate(dir: string, name: string | null): void {
  // The session's own state, saved at the end of every call: nothing the walk reads (a walk then stays valid).
  // Only in a checkout's own .cohent/: a folder of that name deeper down is a held folder like any other.
  if (name !== null && ownDirs.has(dir) && ownState(name)) return;
  events++;
  generation++;
  const f = folders.get(dir);
  if (f) f.entries = null;
  const under = name === null ? dir : `${dir}/${name}`;
  stats.delete(under);
  if (name !== null && !folders.has(under)) return; // a file: its stat was all that was kept
  // A folder replaced or removed: everything kept below it goes (events of its old watcher are not this path's).
  for (const [k, g] of folders)
    if (k === under || k.startsWith(`${under}/`)) {
      if (k !== dir) {
        g.watcher?.close();
        folders.delete(k);
      }
    }
  for (const k of stats.keys())
    if (k.startsWith(`${under}/`) || (name === null && parentOf(k) === dir)) stats.delete(k);
}

/** The folder's record, watched from now on when possible; null when it cannot be (read it every time). */
function folder(dir: string): Folder | null {
  let f = folders.get(dir);
  if (f) return f.watcher || f.missing ? f : null;
  if (folders.size >= MAX_WATCHED) return null;
  f = { watcher: null, entries: null };
  try {
    const w = watch(dir, { persistent: false }, (_event, name) =>
      invalidate(dir, typeof name === "string" ? name : null),
    );
    w.on("error", () => {
      w.close();
      invalidate(dir, null);
      folders.delete(dir);
    });
    f.watcher = w;
  } catch (err) {
    // A held path's absent folder (a client's settings folder the checkout lacks): known absent while its
    // watched parent says nothing, instead of a failed watch (and its cost) at every walk. Looked at again
    // once the parent is watched: created meanwhile, it is read this time and watched next.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return null;
    if (dir.length <= 1 || !folder(parentOf(dir)) || lstatQuiet(dir)) return null;
    f.missing = true;
  }
  folders.set(dir, f);
  return f;
}

const absentFolder = (): never => {
  throw Object.assign(new Error("ENOENT: no such folder"), { code: "ENOENT" });
};

const LIVE: FsView = {
  readdir(abs) {
    const f = folder(abs);
    if (!f) return (generation++, readdirSync(abs, { withFileTypes: true }));
    if (f.missing) return absentFolder();
    return (f.entries ??= readdirSync(abs, { withFileTypes: true }));
  },
  lstat(abs) {
    const f = folder(parentOf(abs));
    if (!f) return (generation++, lstatQuiet(abs));
    if (f.missing) return undefined;
    if (stats.has(abs)) return stats.get(abs);
    const st = lstatQuiet(abs);
    stats.set(abs, st);
    return st;
  },
  version: () => generation,
};

/**
 * The view a walk should use now. In a live process, events queued by the
 * kernel before this call are delivered first (two turns of the event
 * loop: a poll phase runs between them), so a write that returned before
 * the call is seen.
 */
export async function currentView(): Promise<FsView> {
  if (!enabled) return DIRECT;
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  if (Date.now() - fullAt > FULL_EVERY_MS) {
    resetLiveView();
    fullAt = Date.now();
  }
  return LIVE;
}
