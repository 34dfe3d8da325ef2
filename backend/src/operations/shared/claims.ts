import {
  CohentError,
  matchBudget,
  overRoomBudget,
  type QueuePlace,
  type ScopeConflict,
  type ScopeRefusal,
} from "@cohent/protocol";
import { conflictOf, describeConflicts, overlaps } from "../../core/arbitrate.js";
import { keepsWait, samePaths } from "../../core/queue.js";
import { leaseCutoff } from "../../core/lease.js";
import { newId } from "../../ids.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { freeExpired, grantQueue, settleAsks, type Refusal } from "./queue.js";

/**
 * Claims `paths` for an intent, replacing its previous claim. Atomic: it
 * first takes the repository's write lock, so overlapping claims racing
 * from any number of backend instances are decided one after another.
 * Returns the conflicts instead of writing.
 *
 * The claim queue rides along under the same lock: expired scopes are freed
 * (their holders told) and the queue granted before the claim is decided,
 * so a waiter gets a freed path before a newcomer does; a claim that
 * succeeds takes its intent out of the queue unless it only adds work
 * elsewhere (keepsWait); one that narrows or releases
 * settles the release requests made of it and grants the queue again.
 * A plain claim on paths free right now is granted even when an earlier
 * waiter waits for them too: the queue orders waiters, it does not reserve
 * free paths.
 */
const matchingOf = (caller: Caller) => ({ caseInsensitive: caller.repo.caseInsensitive });

export async function claimPaths(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  paths: string[],
  /** The caller's own checks (its intent's ownership), read in the same round trip: nothing is written unless they pass. */
  ready?: Promise<unknown>,
): Promise<{ conflicts: ScopeConflict[]; replaced: string[] }> {
  const repoId = caller.repo.id;
  await t.journal.lock(repoId);
  const now = deps.clock();
  const held = () => Promise.all([t.claims.pathsOf(intentId), t.claims.claimed(repoId, intentId)]);
  // Every read the decision and its writes need, in one round trip on PostgreSQL (the lock held, each
  // round trip holds up every write behind it): the expired claims, the claims, and read ahead, whether
  // anyone queues, this intent's entry and the asks made of it. Freeing an expired claim writes and
  // walks the queue, so then those are read again after it.
  const reads = Promise.all([
    t.claims.expired(repoId, leaseCutoff(now, deps.lease)),
    held(),
    t.queue.any(repoId),
    t.queue.of(intentId),
    t.releaseAsks.openTo(intentId),
  ]);
  await Promise.allSettled([ready, reads]); // none of them still reading when a failed check ends the claim
  await ready;
  const [expired, first, anyQueued, ownEntry, openAsks] = await reads;
  const freed = expired.length ? await freeExpired(t, deps, caller.repo, now, expired) : 0;
  if (freed) await grantQueue(t, deps, caller.repo, now);
  const [previous, peers] = freed ? await held() : first;
  const replaced = previous ?? [];
  const budget = matchBudget();
  const found = overlaps(paths, peers, { caseInsensitive: caller.repo.caseInsensitive, budget });
  // Unsure is not a conflict to report: the claim is refused for its cost (nothing written, nothing queued).
  if (budget.steps <= 0) throw overRoomBudget(paths, peers.length);
  if (found.length) {
    // Who holds them, read only now (the lock is held: the same claims; one gone meanwhile is no conflict).
    const holders = new Map((await t.claims.peers(repoId, intentId)).map((p) => [p.intentId, p]));
    const conflicts = found.flatMap((o) => {
      const holder = holders.get(o.peer.intentId);
      return holder ? [conflictOf(holder, o)] : [];
    });
    if (conflicts.length) return { conflicts, replaced };
  }

  if (paths.length) await t.claims.set({ intentId, repoId, paths, at: now });
  else if (previous) await t.claims.release(intentId);
  await t.journal.addEvent({
    repoId,
    intentId,
    kind: paths.length ? "scope.claimed" : "scope.released",
    summary: paths.length ? `claimed ${paths.join(", ")}` : "released its scope",
    at: now,
  });
  const changed = !!previous && !samePaths(previous, paths);
  // Unless an expiry was freed, what was read ahead holds: nothing since wrote the queue or the asks.
  const [queued, asks] = freed
    ? await Promise.all([t.queue.any(repoId), changed ? t.releaseAsks.openTo(intentId) : null])
    : [anyQueued, openAsks];
  // Work done meanwhile keeps the wait (core/queue keepsWait); any other claim leaves the queue.
  const entry = queued ? (freed ? await t.queue.of(intentId) : ownEntry) : null;
  if (entry && !keepsWait(previous, paths, entry.paths, matchingOf(caller))) await t.queue.leave(intentId);
  if (changed) {
    await settleAsks(t, caller.repo, intentId, paths, now, asks ?? undefined);
    // An empty queue is still empty: only a transaction holding the lock adds a waiter, and this one added none.
    if (queued) await grantQueue(t, deps, caller.repo, now);
  }
  return { conflicts: [], replaced };
}

/** Records a refused claim (a path-guard catch) and throws the conflict. Runs after the claim transaction. */
export async function refuseClaim(
  deps: Deps,
  caller: Caller,
  intentId: string,
  conflicts: ScopeConflict[],
  queued?: QueuePlace | null,
): Promise<never> {
  await deps.store.journal.addGuardCatch({
    id: newId("gc"),
    repoId: caller.repo.id,
    intentId,
    agentId: caller.agentId ?? null,
    kind: "scope-conflict",
    paths: [...new Set(conflicts.flatMap((c) => c.paths))],
    peerIds: conflicts.map((c) => c.intentId),
    at: deps.clock(),
  });
  const details: ScopeRefusal = queued ? { conflicts, queued } : { conflicts };
  const place = queued
    ? ` Queued at place ${queued.place} for ${queued.paths.join(", ")}: the claim is granted the moment they are free, and your next packet says so.`
    : "";
  throw new CohentError(
    "SCOPE_CONFLICT",
    `Scope conflict: ${describeConflicts(conflicts)}.${place}`,
    details,
  );
}

/**
 * Runs a claiming transaction; a conflict is recorded and thrown after it
 * commits (rolling back nothing: a queue entry written with the refusal stays).
 */
export async function withClaim<T>(
  deps: Deps,
  caller: Caller,
  intentId: string,
  fn: (t: Tx) => Promise<T | Refusal>,
): Promise<T> {
  const result = await deps.store.tx(fn, { batch: caller.repo.id });
  if (result && typeof result === "object" && "conflicts" in result)
    return refuseClaim(deps, caller, intentId, result.conflicts, result.queued);
  return result;
}

/** Closes an intent (completed, abandoned, superseded), releases its scope at once, and takes it out of the queue. */
export async function closeIntent(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  state: string,
  summary: string,
): Promise<void> {
  const now = deps.clock();
  const repoId = caller.repo.id;
  await t.journal.lock(repoId);
  await t.intents.update(intentId, { state, closedAt: now, updatedAt: now });
  // Together: on PostgreSQL the two statements share one round trip.
  const [released] = await Promise.all([t.claims.release(intentId), t.queue.leave(intentId)]);
  await t.journal.addEvent({ repoId, intentId, kind: `intent.${state}`, summary, at: now });
  if (released)
    await t.journal.addEvent({
      repoId,
      intentId,
      kind: "scope.released",
      summary: `released its scope (${state})`,
      at: now,
    });
  if (released) {
    await settleAsks(t, caller.repo, intentId, [], now);
    await grantQueue(t, deps, caller.repo, now);
  }
}

/**
 * The same, on the session's row as this transaction reads it: a pause made on another instance a moment
 * ago holds here although this instance's cached session has not heard of it yet (its hint is in flight).
 */
export async function assertControllableNow(t: Tx, caller: Caller): Promise<void> {
  const row = await t.sessions.get(caller.session.id);
  if (row)
    assertControllable({
      ...caller,
      session: { ...caller.session, control: row.control, controlReason: row.controlReason },
    });
}

export function assertControllable(caller: Caller): void {
  if (caller.session.control === "paused")
    throw new CohentError("SESSION_PAUSED", caller.session.controlReason ?? undefined);
  if (caller.session.control === "cancelled")
    throw new CohentError("SESSION_CANCELLED", caller.session.controlReason ?? undefined);
}
