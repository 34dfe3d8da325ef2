import { join } from "node:path";
import { scopeCovers } from "@cohent/protocol/paths";
import { lockFile } from "@cohent/client";
import type { PeerScope } from "../git/git-guard.js";
import { diffSnapshots } from "./diff.js";
import { explainedBy } from "./edits.js";
import { fromRows, toRows, type FileRow } from "./pending.js";
import type { HeldChange, HeldSnapshot } from "./snapshot.js";
import { ensureStash, lstatQuiet, readJson, stashDir, writeAtomic } from "./stash.js";

/**
 * The checkout's last known state of every held file (all live claims and
 * the guard's own files), shared by its sessions: <stash>/baseline.json.
 * Every guarded call compares the state it finds with it, so that a change
 * no call explains (a background job, a process outside any agent, a call
 * whose client switched its hooks off) is noticed at the next tool call of
 * any session, not never. A call's own writes are judged by its own check
 * after the call (held/call.ts), which then moves the baseline on.
 */

/** A claim as the baseline keeps it: whose, and which paths. */
export type Claim = Pick<PeerScope, "intentId" | "person" | "paths">;

interface BaselineFile {
  v: 1;
  at: number;
  claims: Claim[];
  snap: Omit<HeldSnapshot, "files"> & { files: FileRow[] };
}

export interface Baseline {
  at: number;
  claims: Claim[];
  snap: HeldSnapshot;
}

const baselineFile = (root: string) => join(stashDir(root), "baseline.json");
/** An unchanged baseline is written again after this long, so the window a change is judged over stays short. */
const REWRITE_MS = 60_000;

/** The parsed baseline, kept for a long-lived guard process while the file is unchanged. */
let cached: { file: string; stamp: string; value: Baseline } | null = null;

const stampOf = (file: string) => {
  const st = lstatQuiet(file);
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : null;
};

export function readBaseline(root: string): Baseline | null {
  const file = baselineFile(root);
  const stamp = stampOf(file);
  if (stamp === null) return null;
  if (cached?.file === file && cached.stamp === stamp) return cached.value;
  const body = readJson<BaselineFile>(file);
  if (!body || body.v !== 1 || !body.snap || !Array.isArray(body.snap.files) || !Array.isArray(body.claims))
    return null;
  const value: Baseline = {
    at: body.at,
    claims: body.claims,
    snap: { ...body.snap, files: fromRows(body.snap.files) },
  };
  cached = { file, stamp, value };
  return value;
}

/** Writes the baseline (the caller holds its lock). */
function writeBaseline(root: string, b: Baseline): void {
  const file = baselineFile(root);
  const body: BaselineFile = {
    v: 1,
    at: b.at,
    claims: b.claims,
    snap: { ...b.snap, files: toRows(b.snap.files) },
  };
  writeAtomic(file, JSON.stringify(body));
  const stamp = stampOf(file);
  if (stamp) cached = { file, stamp, value: b };
}

/** The held paths of these claims and the guard's own files, deduplicated. */
export const heldOf = (claims: readonly Claim[], extra: readonly string[]): string[] => [
  ...new Set([...claims.flatMap((c) => c.paths), ...extra]),
];

const sameClaims = (a: readonly Claim[], b: readonly Claim[]) =>
  a.length === b.length &&
  a.every(
    (x, i) =>
      x.intentId === b[i]!.intentId &&
      x.person === b[i]!.person &&
      x.paths.length === b[i]!.paths.length &&
      x.paths.every((p, j) => p === b[i]!.paths[j]),
  );

export interface Between {
  /** Changes since the baseline that no guarded call explains. */
  changes: HeldChange[];
  /** The baseline's time: the changes happened after it. */
  since: number;
  claims: Claim[];
}

/**
 * Compares `now` (a snapshot over the held paths, taken at this call) with
 * the baseline, then makes `now` the baseline. A change is left out when a
 * guarded edit or call of any session explains it (held/edits.ts), or when
 * another call still running watches it: that call's own check judges it.
 * `inFlight`: whether a path lies under a call of another session still
 * running (its pending snapshot). Null when there was no baseline yet.
 */
export function compareWithBaseline(
  root: string,
  now: HeldSnapshot,
  claims: Claim[],
  inFlight: (path: string) => boolean,
): Between | null {
  let base: Baseline | null;
  let diff: HeldChange[] = [];
  // Nothing changed and nothing to write: no lock (a long-lived guard's steady state).
  const seen = readBaseline(root);
  if (
    seen !== null &&
    sameClaims(seen.claims, claims) &&
    now.at - seen.at <= REWRITE_MS &&
    diffSnapshots(seen.snap, now).length === 0
  ) {
    // The same state: kept as this call's snapshot, so that the next call's, reused while nothing changes, matches at once.
    if (cached?.value === seen) cached.value = { ...seen, snap: now };
    return { changes: [], since: seen.at, claims: seen.claims.length ? seen.claims : claims };
  }
  // Read, compare and write under one lock: two sessions' calls at once must not both report one change.
  try {
    ensureStash(root);
    const unlock = lockFile(baselineFile(root));
    try {
      base = readBaseline(root);
      if (base) diff = diffSnapshots(base.snap, now);
      // Unchanged, and the claims too: no write (the window since it only grows, which explains more, never less).
      const same = base !== null && sameClaims(base.claims, claims);
      if (!same || !base || diff.length > 0 || now.at - base.at > REWRITE_MS)
        writeBaseline(root, { at: now.at, claims, snap: now });
    } finally {
      unlock();
    }
  } catch {
    return null; // no stash: the call's own check still runs; the next call compares
  }
  if (!base) return null;
  const changes = diff.filter(
    (c) => explainedBy(root, c.path, base.at, now.at, "") === null && !inFlight(c.path),
  );
  return { changes, since: base.at, claims: base.claims.length ? base.claims : claims };
}

/** The claims (of `claims`) covering a path. */
export const holdersOf = (claims: readonly Claim[], path: string): Claim[] =>
  claims.filter((c) => c.paths.length > 0 && scopeCovers(c.paths, path));
