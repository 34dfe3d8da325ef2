import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { statKey, type HeldChange } from "./held-snapshot.js";
import {
  ensureStash,
  getObject,
  lstatQuiet,
  readJson,
  removeQuietly,
  sha256,
  stashDir,
  writeAtomic,
} from "./held-stash.js";
import { lockFile } from "@cohent/client/state/lock-file.js";

/**
 * Writes caught under peers' held paths, and their undoing. The module's
 * API: snapshot before a shell call and compare after it (held-snapshot.ts),
 * a catch recorded with the bytes from before, `restore` putting them back,
 * and the journal of guarded edits that keeps a peer's own edit, made
 * during the call, from being blamed on the call.
 *
 * Never throws, except where the caller must fail closed: savePending and
 * recordCatch throw when the stash cannot be written (or stays locked).
 */

export {
  compareHeld,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_FILES,
  snapshotHeld,
  type HeldChange,
  type HeldFile,
  type HeldSnapshot,
  type SnapshotOptions,
} from "./held-snapshot.js";
export { savePending, takePending, type PendingMeta } from "./held-pending.js";
export { explainedBy, noteEdit } from "./held-edits.js";
export { pruneStash, stashDir, STASH_CAP } from "./held-stash.js";

// ---- Catches ----

export interface CatchPeer {
  path: string;
  intentId: string;
  person: string;
}

export interface Catch {
  /** Short id, for `restore --catch ID`. */
  id: string;
  sessionId: string;
  tool: string;
  command: string | null;
  at: number;
  changes: HeldChange[];
  peers: CatchPeer[];
  /** Paths restored since, with when. */
  restored?: Record<string, number>;
}

export interface CatchInput {
  sessionId: string;
  tool: string;
  command: string | null;
  changes: HeldChange[];
  peers?: CatchPeer[];
  at?: number;
}

interface Journal {
  v: 1;
  catches: Catch[];
}

const CATCHES_MAX = 200;
/** Changes over all kept catches: a command that deletes a big held folder should not make the journal huge. */
const CHANGES_MAX = 20_000;
const COMMAND_MAX = 2_000;

const journalFile = (dir: string) => join(dir, "catches.json");

function readJournal(dir: string): Journal {
  const j = readJson<Journal>(journalFile(dir));
  return j && j.v === 1 && Array.isArray(j.catches) ? j : { v: 1, catches: [] };
}

/** Read, change and write the journal under its lock; throws when it stays locked or cannot be written. */
function updateJournal<T>(dir: string, change: (j: Journal) => T): T {
  const unlock = lockFile(journalFile(dir))!;
  try {
    const j = readJournal(dir);
    const out = change(j);
    writeAtomic(journalFile(dir), JSON.stringify(j));
    return out;
  } finally {
    unlock();
  }
}

/** Keeps a catch (newest of the last 200) for restore and listing. Throws when the stash cannot be written. */
export function recordCatch(root: string, input: CatchInput): Catch {
  const dir = ensureStash(root);
  return updateJournal(dir, (j) => {
    const ids = new Set(j.catches.map((c) => c.id));
    let id: string;
    do id = `c${Math.random().toString(36).slice(2, 9).padEnd(7, "0")}`;
    while (ids.has(id));
    const c: Catch = {
      id,
      sessionId: input.sessionId,
      tool: input.tool,
      command: input.command === null ? null : input.command.slice(0, COMMAND_MAX),
      at: input.at ?? Date.now(),
      changes: input.changes,
      peers: input.peers ?? [],
    };
    j.catches.push(c);
    let total = j.catches.reduce((n, x) => n + x.changes.length, 0);
    while (j.catches.length > 1 && (j.catches.length > CATCHES_MAX || total > CHANGES_MAX))
      total -= j.catches.shift()!.changes.length;
    return c;
  });
}

/** The kept catches, newest first. */
export function listCatches(root: string): Catch[] {
  return readJournal(stashDir(root)).catches.slice().reverse();
}

// ---- Restore ----

export interface RestoreResult {
  restored: string[];
  notRestorable: string[];
  message: string;
}

type Outcome = { ok: true } | { ok: false; why: string };

/** The file as it is: null when absent, "not a file" for a folder or a link, else its stat. */
function current(abs: string): Stats | "not a file" | null {
  const st = lstatQuiet(abs);
  return st ? (st.isFile() ? st : "not a file") : null;
}

function hashOf(abs: string): string | null {
  try {
    return sha256(readFileSync(abs));
  } catch {
    return null;
  }
}

/** Is a present file still as the caught call left it (`after`: its hash, or its stat past the bound)? */
function unchangedSince(abs: string, st: Stats, after: string | null): boolean {
  if (after === null) return false;
  if (after.startsWith("stat:")) return after === `stat:${statKey(st)}`;
  return after === `sha256:${hashOf(abs)}`;
}

/**
 * Does the file's folder lie in the checkout? A folder replaced since by a
 * link to elsewhere must not make restore write or remove outside it.
 */
function insideCheckout(root: string, abs: string): boolean {
  try {
    const top = realpathSync(root);
    let dir = dirname(abs);
    while (!existsSync(dir) && dir !== dirname(dir)) dir = dirname(dir); // a deleted folder: its nearest parent
    const real = realpathSync(dir);
    return real === top || real.startsWith(top + sep);
  } catch {
    return false;
  }
}

/** Puts one file back as it was before the caught call. */
function restoreOne(root: string, dir: string, ch: HeldChange, force: boolean): Outcome {
  const abs = join(root, ch.path);
  if (!insideCheckout(root, abs)) return { ok: false, why: "its folder now leads outside the checkout" };
  const now = current(abs);
  if (now === "not a file") return { ok: false, why: "is no longer a file" };
  if (ch.change === "created") {
    if (now === null) return { ok: true }; // already gone
    if (!force && !unchangedSince(abs, now, ch.after)) return { ok: false, why: "changed since the catch" };
    return removeQuietly(abs) ? { ok: true } : { ok: false, why: "could not be removed" };
  }
  if (!ch.before) return { ok: false, why: "its bytes were past the snapshot's bound, so not kept" };
  if (now !== null && hashOf(abs) === ch.before) return { ok: true }; // already as before
  // A file changed since the catch holds someone's later work: put the old bytes over it only when asked to.
  const asLeft = now === null ? ch.after === null : unchangedSince(abs, now, ch.after);
  if (!asLeft && !force) return { ok: false, why: "changed since the catch" };
  const bytes = getObject(dir, ch.before);
  if (!bytes) return { ok: false, why: "its bytes are no longer in the stash" };
  const mode = now ? now.mode & 0o7777 : (ch.mode ?? 0o644);
  const tmp = join(dirname(abs), `.${basename(abs)}.cohent-restore-${process.pid}.tmp`);
  try {
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(tmp, bytes, { mode });
    chmodSync(tmp, mode); // writeFileSync's mode is masked by the umask
    renameSync(tmp, abs);
    return { ok: true };
  } catch (err) {
    removeQuietly(tmp);
    return { ok: false, why: `could not be written (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  }
}

const listed = (paths: string[]) =>
  paths.slice(0, 20).join(", ") + (paths.length > 20 ? ` and ${paths.length - 20} more` : "");

/**
 * Puts back what a caught call changed under `path` (a file, a folder: every
 * file below it, "." for all): each file as the latest catch that names it
 * found it before the call, or, with `catchId`, every file of that catch
 * under `path`. A modified or deleted file gets its bytes back (atomically,
 * its mode kept), a created one is removed. A file changed again since the
 * catch is left alone unless `force`. Never throws.
 */
export function restoreHeld(
  root: string,
  path: string,
  opts: { catchId?: string; force?: boolean; now?: number } = {},
): RestoreResult {
  let target: string;
  try {
    target = normalizeRepoPath(path, root);
  } catch (err) {
    return { restored: [], notRestorable: [], message: `Cannot restore ${path}: ${(err as Error).message}` };
  }
  const dir = stashDir(root);
  const catches = readJournal(dir).catches;
  const picks = new Map<string, { c: Catch; ch: HeldChange }>();
  const chosen = opts.catchId ? catches.filter((c) => c.id === opts.catchId) : catches;
  if (opts.catchId && chosen.length === 0)
    return {
      restored: [],
      notRestorable: [],
      message: `No catch ${opts.catchId} (see the list of catches).`,
    };
  // Oldest first: a later catch of the same file replaces an earlier one.
  for (const c of chosen)
    for (const ch of c.changes) if (scopeCovers([target], ch.path)) picks.set(ch.path, { c, ch });
  if (picks.size === 0)
    return { restored: [], notRestorable: [], message: `No caught write under ${target} to restore.` };

  const restored: string[] = [];
  const failed: { path: string; why: string }[] = [];
  for (const { ch } of picks.values()) {
    const out = restoreOne(root, dir, ch, opts.force === true);
    if (out.ok) restored.push(ch.path);
    else failed.push({ path: ch.path, why: out.why });
  }
  if (restored.length) {
    const at = opts.now ?? Date.now();
    const done = new Map<string, string[]>();
    for (const p of restored) done.set(picks.get(p)!.c.id, [...(done.get(picks.get(p)!.c.id) ?? []), p]);
    try {
      updateJournal(dir, (j) => {
        for (const c of j.catches) for (const p of done.get(c.id) ?? []) (c.restored ??= {})[p] = at;
      });
    } catch {
      /* the files are back; only the listing's "restored" mark is missing */
    }
  }
  const ids = [...new Set([...picks.values()].map((x) => x.c.id))];
  const parts: string[] = [];
  if (restored.length)
    parts.push(
      `Restored ${restored.length} file(s) as before the caught call (${ids.join(", ")}): ${listed(restored)}.`,
    );
  if (failed.length) {
    const changedSince = failed.some((f) => f.why === "changed since the catch");
    parts.push(
      `Not restored: ${listed(failed.map((f) => `${f.path} (${f.why})`))}.` +
        (changedSince && !opts.force
          ? " A file changed since the catch is somebody's newer work: compare it by hand."
          : ""),
    );
  }
  return { restored, notRestorable: failed.map((f) => f.path), message: parts.join(" ") };
}
