import { matchBudget, scopeOverlap, type MatchOptions } from "@cohent/protocol";
import { arbitrate, overlaps, type Claimed, type PeerClaim } from "./arbitrate.js";

/** A waiting claim, in queue order (createdAt, then id). */
export interface QueuedClaim {
  id: string;
  intentId: string;
  paths: string[];
  createdAt: Date;
}

/** One matching budget for a walk over the room (past it, unsure means overlap: a waiter waits). */
const budgeted = (opts: MatchOptions): MatchOptions =>
  opts.budget ? opts : { ...opts, budget: matchBudget() };

/** Queue order: first come, first served; the id breaks a tie of the same instant. */
export const queueOrder = (a: QueuedClaim, b: QueuedClaim): number =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Which waiters the queue grants now, pure. Walks the queue in order: a
 * waiter is granted when its paths overlap no other intent's claim (the same
 * arbitration as any claim, against the claims as they stand after the
 * grants before it) and no earlier waiter still waiting (nobody overtakes
 * inside the queue). A grant replaces the waiter's own previous claim.
 * `claims` are the live claims, expired ones already removed by the caller.
 */
export function grantOrder(
  claims: readonly Claimed[],
  queue: readonly QueuedClaim[],
  opts: MatchOptions = {},
): { granted: QueuedClaim[]; waiting: QueuedClaim[] } {
  opts = budgeted(opts);
  const held = new Map(claims.map((c) => [c.intentId, c]));
  const granted: QueuedClaim[] = [];
  const waiting: QueuedClaim[] = [];
  for (const w of [...queue].sort(queueOrder)) {
    const others = [...held.values()].filter((c) => c.intentId !== w.intentId);
    const blocked =
      overlaps(w.paths, others, opts).length > 0 ||
      waiting.some((e) => scopeOverlap(w.paths, e.paths, opts).length > 0);
    if (blocked) {
      waiting.push(w);
      continue;
    }
    granted.push(w);
    held.set(w.intentId, { intentId: w.intentId, paths: w.paths });
  }
  return { granted, waiting };
}

/**
 * Where a waiter stands: the holders whose claims it overlaps, and the
 * earlier waiters whose paths it overlaps (it cannot pass them). Place 1 is
 * next: no earlier waiter stands between it and its paths.
 */
export function queuePlace(
  me: QueuedClaim,
  claims: readonly PeerClaim[],
  queue: readonly QueuedClaim[],
  opts: MatchOptions = {},
): { place: number; holders: { intentId: string; paths: string[] }[]; ahead: QueuedClaim[] } {
  opts = budgeted(opts);
  const holders = arbitrate(
    me.paths,
    claims.filter((c) => c.intentId !== me.intentId),
    opts,
  ).map((c) => ({ intentId: c.intentId, paths: c.theirPaths }));
  const ahead = [...queue]
    .sort(queueOrder)
    .filter(
      (w) =>
        w.intentId !== me.intentId &&
        queueOrder(w, me) < 0 &&
        scopeOverlap(me.paths, w.paths, opts).length > 0,
    );
  return { place: ahead.length + 1, holders, ahead };
}

/** The waiters whose paths overlap `paths` (a holder's claim): the queue behind it, in order. */
export function waitersOn(
  paths: readonly string[],
  queue: readonly QueuedClaim[],
  opts: MatchOptions = {},
): QueuedClaim[] {
  opts = budgeted(opts);
  return [...queue].sort(queueOrder).filter((w) => scopeOverlap(paths, w.paths, opts).length > 0);
}

/** True when two path lists hold the same paths, in any order: a re-queue with the same paths keeps its place. */
export const samePaths = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

/**
 * Does a successful claim keep the intent's place in the queue? Only work
 * done meanwhile does: a claim that keeps everything it held (it adds to its
 * scope, as the hook's claim of a new edit target does) and names none of
 * the paths it waits for. Any other claim (a different scope, a release,
 * a claim of a waited path) is a change of plan and leaves the queue.
 */
export function keepsWait(
  previous: readonly string[] | null,
  paths: readonly string[],
  waitingFor: readonly string[],
  opts: MatchOptions = {},
): boolean {
  if (!paths.length) return false;
  const now = new Set(paths);
  if (previous && !previous.every((p) => now.has(p))) return false;
  return scopeOverlap(paths, waitingFor, opts).length === 0;
}

/** A queued claim's grant: the paths it waited for, and what it holds by then (work done meanwhile stays its own). */
export const grantedPaths = (waited: readonly string[], held: readonly string[] | null): string[] => [
  ...new Set([...waited, ...(held ?? [])]),
];

/**
 * Does a repeated queued claim keep its place? When every path it is refused
 * on was already waited for: it may add paths it can hold, or drop some, but
 * it contends for nothing new.
 */
export const keepsPlace = (waited: readonly string[], contested: readonly string[]): boolean => {
  const before = new Set(waited);
  return contested.every((p) => before.has(p));
};
