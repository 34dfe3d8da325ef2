import {
  scopeOverlap,
  type LostReason,
  type MatchOptions,
  type NoticePeer,
  type QueuePlace,
  type ScopeConflict,
} from "@cohent/protocol";
import type { PeerClaim } from "../../core/arbitrate.js";
import { leaseCutoff } from "../../core/lease.js";
import { grantedPaths, grantOrder, keepsPlace, queuePlace, samePaths, waitersOn } from "../../core/queue.js";
import { renderNotice, type NoticeParts } from "../../core/render.js";
import { newId } from "../../ids.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";

/**
 * The claim queue's writes. Every function here runs inside a transaction
 * that holds the repository's write lock (t.journal.lock), so a queue is
 * walked, and a waiter granted, by one transaction at a time on any number
 * of instances: never two grants.
 */

export type RepoRef = { id: string; caseInsensitive: boolean };
const matching = (repo: RepoRef): MatchOptions => ({ caseInsensitive: repo.caseInsensitive });

export const noticePeer = (p: {
  intentId: string | null;
  person: string;
  client: string | null;
  model: string | null;
}): NoticePeer => ({ intentId: p.intentId, person: p.person, client: p.client, model: p.model });

/**
 * Writes a notice for an intent, and a change-log entry naming it: the
 * entry moves the cursor, so the recipient's long-poll wakes on any
 * instance, and the console's live stream shows it.
 */
export async function notify(
  t: Tx,
  repoId: string,
  to: { intentId: string; sessionId: string },
  parts: NoticeParts & { waitedMs?: number },
  at: Date,
): Promise<void> {
  await t.notices.add({
    id: newId("ntc"),
    repoId,
    intentId: to.intentId,
    sessionId: to.sessionId,
    kind: parts.kind,
    paths: [...parts.paths],
    peer: parts.peer,
    note: parts.note ?? null,
    reason: parts.reason ?? null,
    queueLength: parts.queueLength ?? null,
    waitedMs: parts.waitedMs ?? null,
    text: renderNotice(parts),
    at,
  });
  await t.journal.addEvent({
    repoId,
    intentId: to.intentId,
    kind: "notice",
    peerIds: [to.intentId],
    summary: `${parts.kind}: ${parts.paths.join(", ")}`,
    at,
  });
}

/** Closes the open release requests made of a holder whose claim changed: honoured where it no longer overlaps them. */
export async function settleAsks(
  t: Tx,
  repo: RepoRef,
  intentId: string,
  paths: readonly string[],
  at: Date,
  /** The open asks, when the caller read them already under the same lock. */
  asks?: Awaited<ReturnType<Tx["releaseAsks"]["openTo"]>>,
): Promise<void> {
  const open = asks ?? (await t.releaseAsks.openTo(intentId));
  const honoured = open.filter((a) => scopeOverlap(a.paths, paths, matching(repo)).length === 0);
  await t.releaseAsks.close(
    honoured.map((a) => a.id),
    at,
    true,
  );
}

/**
 * Frees a claim its holder did not release (lease expiry, a person's
 * release, a cancel): the holder is told once (`scope-lost`), and the
 * release requests made of it close unhonoured. False when it held none.
 */
export async function loseClaim(
  t: Tx,
  repo: RepoRef,
  intentId: string,
  loss: { reason: LostReason; by: NoticePeer | null; summary: string },
  at: Date,
): Promise<string[] | null> {
  const paths = await t.claims.pathsOf(intentId);
  if (!paths || !(await t.claims.release(intentId))) return null;
  await t.journal.addEvent({ repoId: repo.id, intentId, kind: "scope.released", summary: loss.summary, at });
  const holder = await t.queue.party(intentId);
  if (holder) {
    await notify(t, repo.id, holder, { kind: "scope-lost", paths, peer: loss.by, reason: loss.reason }, at);
    await t.sessions.fence(holder.sessionId, repo.id);
  }
  await t.releaseAsks.close(
    (await t.releaseAsks.openTo(intentId)).map((a) => a.id),
    at,
    false,
  );
  return paths;
}

/** Takes an intent out of the queue without it asking (expiry, cancel): it is told once (`queue-left`). */
export async function dropWaiter(
  t: Tx,
  repo: RepoRef,
  waiter: { intentId: string; sessionId: string },
  reason: LostReason,
  at: Date,
): Promise<void> {
  const paths = await t.queue.remove(waiter.intentId);
  if (!paths) return;
  await t.journal.addEvent({
    repoId: repo.id,
    intentId: waiter.intentId,
    kind: "queue.left",
    summary: `left the queue for ${paths.join(", ")} (${reason})`,
    at,
  });
  await notify(t, repo.id, waiter, { kind: "queue-left", paths, peer: null, reason }, at);
}

/** Frees the claims whose holder's lease expired (each holder told once). Returns how many. */
export async function freeExpired(
  t: Tx,
  deps: Deps,
  repo: RepoRef,
  at: Date,
  /** The expired claims' intents, when the caller read them already under the lock. */
  expired?: string[],
): Promise<number> {
  let freed = 0;
  for (const intentId of expired ?? (await t.claims.expired(repo.id, leaseCutoff(at, deps.lease)))) {
    const lost = await loseClaim(
      t,
      repo,
      intentId,
      { reason: "lease-expired", by: null, summary: "lease expired; scope freed" },
      at,
    );
    if (lost) freed++;
  }
  return freed;
}

/**
 * Walks the repository's queue after a release (core/queue grantOrder):
 * drops waiters whose lease expired, then grants, in order, each waiter
 * whose paths are all free and that overtakes no earlier waiter. A grant
 * sets the waiter's claim to those paths and what it holds by then, takes it out of the
 * queue, and tells it (`scope-granted`). Returns the granted intents.
 */
export async function grantQueue(t: Tx, deps: Deps, repo: RepoRef, at: Date): Promise<string[]> {
  if (!(await t.queue.any(repo.id))) return [];
  await freeExpired(t, deps, repo, at);
  const cutoff = leaseCutoff(at, deps.lease);
  const all = await t.queue.list(repo.id);
  for (const w of all)
    if (w.party.lastSeenAt < cutoff) await dropWaiter(t, repo, w.party, "lease-expired", at);
  const waiters = all.filter((w) => w.party.lastSeenAt >= cutoff);
  if (!waiters.length) return [];
  // The claims' paths alone (claims.claimed): a grant needs no holder's name.
  const { granted } = grantOrder(await t.claims.claimed(repo.id, ""), waiters, matching(repo));
  for (const granted1 of granted) {
    const w = waiters.find((x) => x.id === granted1.id)!;
    const g = { ...granted1, paths: grantedPaths(granted1.paths, await t.claims.pathsOf(granted1.intentId)) };
    await t.claims.set({ intentId: g.intentId, repoId: repo.id, paths: g.paths, at });
    await t.queue.remove(g.intentId);
    await t.journal.addEvent({
      repoId: repo.id,
      intentId: g.intentId,
      kind: "scope.granted",
      summary: `granted ${g.paths.join(", ")} from the queue`,
      at,
    });
    await notify(
      t,
      repo.id,
      w.party,
      {
        kind: "scope-granted",
        paths: g.paths,
        peer: null,
        waitedMs: Math.max(0, at.getTime() - g.createdAt.getTime()),
      },
      at,
    );
    await settleAsks(t, repo, g.intentId, g.paths, at);
  }
  return granted.map((g) => g.intentId);
}

/**
 * Puts a refused claim in the queue: the intent's single entry, kept in
 * place when it asks again contending for nothing new (`contested`, the
 * paths it is refused on, were all waited for: core/queue keepsPlace),
 * else written anew at the tail. A new or moved entry tells each holder it waits behind
 * (`scope-waiter`). Returns where it stands.
 */
export async function queueClaim(
  t: Tx,
  caller: Caller,
  intentId: string,
  paths: string[],
  contested: string[],
  at: Date,
): Promise<QueuePlace> {
  const repo = caller.repo;
  const opts = matching(repo);
  const prior = await t.queue.of(intentId);
  let entry = prior;
  let moved = false;
  if (entry && !samePaths(entry.paths, paths) && keepsPlace(entry.paths, contested)) {
    // The same contention with other paths beside it (work done meanwhile): the place stays.
    entry = { ...entry, paths };
    await t.queue.put({ id: entry.id, repoId: repo.id, intentId, paths, at: entry.createdAt });
  } else if (!entry || !samePaths(entry.paths, paths)) {
    // Strictly after the tail: first come, first served, even within one millisecond.
    const tail = await t.queue.tailAt(repo.id);
    const since = tail && tail >= at ? new Date(tail.getTime() + 1) : at;
    entry = { id: newId("qw"), intentId, paths, createdAt: since };
    await t.queue.put({ id: entry.id, repoId: repo.id, intentId, paths, at: since });
    moved = true;
  }
  const waiters = await t.queue.list(repo.id);
  const holders = await t.queue.holders(repo.id);
  const claims: PeerClaim[] = holders;
  const place = queuePlace(entry, claims, waiters, opts);
  if (moved) {
    await t.journal.addEvent({
      repoId: repo.id,
      intentId,
      kind: "scope.queued",
      summary: `queued for ${paths.join(", ")} (place ${place.place})`,
      at,
    });
    const me = noticePeer({
      intentId,
      person: caller.token.person,
      client: caller.session.client ?? caller.token.client,
      model: caller.session.model,
    });
    for (const h of place.holders) {
      const holder = holders.find((x) => x.intentId === h.intentId)!;
      await notify(
        t,
        repo.id,
        holder,
        {
          kind: "scope-waiter",
          paths: paths.filter((p) => scopeOverlap([p], holder.paths, opts).length > 0),
          peer: me,
          queueLength: waitersOn(holder.paths, waiters, opts).length,
          keep: holder.paths.filter((p) => scopeOverlap([p], paths, opts).length === 0),
        },
        at,
      );
    }
  }
  const byId = new Map(waiters.map((w) => [w.intentId, w.party]));
  const who = (p: { intentId: string; person: string; client: string | null; model: string | null }) => ({
    intentId: p.intentId,
    person: p.person,
    client: p.client,
    model: p.model,
  });
  return {
    paths: entry.paths,
    place: place.place,
    behind: [
      ...place.holders.map((h) => ({
        ...who(holders.find((x) => x.intentId === h.intentId)!),
        paths: h.paths,
        holds: true,
      })),
      ...place.ahead.map((w) => ({ ...who(byId.get(w.intentId)!), paths: w.paths, holds: false })),
    ],
    since: entry.createdAt.toISOString(),
  };
}

/** The conflicts of a refusal, with the queue place when the claim asked to queue. */
export type Refusal = { conflicts: ScopeConflict[]; queued?: QueuePlace | null };
