import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { lockFile } from "@cohent/client";
import { DEFAULT_MAX_BYTES, type HeldChange } from "./snapshot.js";
import { ensureStash, hasObject, putObject, readJson, sha256, stashDir, writeAtomic } from "./stash.js";

/**
 * The catches journal: each write caught under peers' held paths, with the
 * keys of the bytes before and after the call, for `restore` and its list.
 */

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
  /** Paths whose version at the restore (edited since the catch) was kept, with where (held/restore.ts). */
  kept?: Record<string, string>;
}

export interface CatchInput {
  sessionId: string;
  tool: string;
  command: string | null;
  changes: HeldChange[];
  peers?: CatchPeer[];
  at?: number;
}

export interface Journal {
  v: 1;
  catches: Catch[];
}

const CATCHES_MAX = 200;
/** Changes over all kept catches: a command that deletes a big held folder should not make the journal huge. */
const CHANGES_MAX = 20_000;
const COMMAND_MAX = 2_000;

const journalFile = (dir: string) => join(dir, "catches.json");

export function readJournal(dir: string): Journal {
  const j = readJson<Journal>(journalFile(dir));
  return j && j.v === 1 && Array.isArray(j.catches) ? j : { v: 1, catches: [] };
}

/** Read, change and write the journal under its lock; throws when it stays locked or cannot be written. */
export function updateJournal<T>(dir: string, change: (j: Journal) => T): T {
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

/**
 * Keeps the bytes a modified file was left with (its `after` hash), so that
 * a restore after a later edit can merge that edit over the bytes it puts
 * back. Best effort: a file changed again meanwhile, or past the bound,
 * leaves none, and restore then keeps the later version beside instead.
 */
function keepAfter(root: string, dir: string, changes: readonly HeldChange[]): void {
  for (const ch of changes) {
    if (ch.change !== "modified" || !ch.after?.startsWith("sha256:")) continue;
    const key = ch.after.slice("sha256:".length);
    try {
      if (hasObject(dir, key)) continue;
      const abs = join(root, ch.path);
      if ((statSync(abs, { throwIfNoEntry: false })?.size ?? Infinity) > DEFAULT_MAX_BYTES) continue;
      const bytes = readFileSync(abs);
      if (sha256(bytes) === key) putObject(dir, bytes);
    } catch {
      /* not kept: a later edit is then kept beside, not merged */
    }
  }
}

/** Keeps a catch (newest of the last 200) for restore and listing. Throws when the stash cannot be written. */
export function recordCatch(root: string, input: CatchInput): Catch {
  const dir = ensureStash(root);
  keepAfter(root, dir, input.changes);
  const dropped: string[] = [];
  const c = updateJournal(dir, (j) => {
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
    while (j.catches.length > 1 && (j.catches.length > CATCHES_MAX || total > CHANGES_MAX)) {
      const old = j.catches.shift()!;
      total -= old.changes.length;
      if (old.kept) dropped.push(old.id);
    }
    return c;
  });
  // A catch gone from the journal takes the versions its restores kept with it.
  for (const id of dropped) rmSync(join(dir, "kept", id), { recursive: true, force: true });
  return c;
}

/** The kept catches, newest first. */
export function listCatches(root: string): Catch[] {
  return readJournal(stashDir(root)).catches.slice().reverse();
}
