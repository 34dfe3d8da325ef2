/**
 * Writes caught under peers' held paths, and their undoing. The module's
 * API: snapshot before a shell call and compare after it (held/snapshot.ts),
 * a catch recorded with the bytes from before and after (held/catches.ts),
 * `restore` putting them back, with an edit made since merged or kept
 * (held/restore.ts), and the journal of guarded edits that keeps a peer's
 * own edit, made during the call, from being blamed on the call.
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
} from "./snapshot.js";
export { savePending, takePending, type PendingMeta } from "./pending.js";
export { explainedBy, noteEdit } from "./edits.js";
export { keptKeys, pruneStash, stashDir, STASH_CAP } from "./stash.js";
export { listCatches, recordCatch, type Catch, type CatchInput, type CatchPeer } from "./catches.js";
export { restoreHeld, type RestoreResult } from "./restore.js";
