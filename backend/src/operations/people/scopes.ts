import {
  CohentError,
  type LostClaimView,
  type ScopeParty,
  type ScopeReleaseResult,
  type ScopesView,
  type ScopeWaiterView,
} from "@cohent/protocol";
import { guardStatus } from "../../core/lease.js";
import { queuePlace, waitersOn } from "../../core/queue.js";
import { newId } from "../../ids.js";
import type { QueueParty } from "../../store/queue.js";
import type { Deps } from "../deps.js";
import { reasonText } from "../shared/free-text.js";
import { grantQueue, loseClaim } from "../shared/queue.js";
import { repoByName } from "../shared/repos.js";

/** How far back the Scopes view lists lost claims, and how many. */
const LOST_WINDOW_MS = 24 * 60 * 60_000;
const LOST_SHOWN = 50;

const party = (p: QueueParty): ScopeParty => ({
  intentId: p.intentId,
  sessionId: p.sessionId,
  person: p.person,
  client: p.client,
  model: p.model,
  objective: p.objective,
});
const unknownParty = (intentId: string): ScopeParty => ({
  intentId,
  sessionId: "",
  person: "unknown",
  client: null,
  model: null,
  objective: null,
});

/** The Scopes view of a repository: every claim with its holder, the queue behind it, the release requests made of it; the queue; recent lost claims. */
export async function scopesView(deps: Deps, repoName: string): Promise<ScopesView> {
  const repo = await repoByName(deps.store, repoName);
  const now = deps.clock();
  const opts = { caseInsensitive: repo.caseInsensitive };
  const holders = await deps.store.queue.holders(repo.id);
  const queue = await deps.store.queue.list(repo.id);
  const asks = await deps.store.releaseAsks.openOfRepo(repo.id);
  const lost = await deps.store.notices.recentLost(
    repo.id,
    new Date(now.getTime() - LOST_WINDOW_MS),
    LOST_SHOWN,
  );
  const parties = await deps.store.queue.parties([
    ...asks.map((a) => a.fromIntentId),
    ...lost.map((l) => l.intentId),
  ]);
  const partyOf = (id: string) => {
    const p = parties.get(id);
    return p ? party(p) : unknownParty(id);
  };
  const waiterView = (w: (typeof queue)[number]): ScopeWaiterView => ({
    ...party(w.party),
    paths: w.paths,
    place: queuePlace(w, holders, queue, opts).place,
    since: w.createdAt.toISOString(),
  });
  const lostViews: LostClaimView[] = lost.map((l) => ({
    ...partyOf(l.intentId),
    paths: l.paths,
    reason: l.reason,
    at: l.at.toISOString(),
  }));
  return {
    repo: repo.name,
    serverTime: now.toISOString(),
    claims: holders.map((h) => {
      const guard = guardStatus(h.lastSeenAt, now, deps.lease);
      return {
        ...party(h),
        paths: h.paths,
        since: h.since.toISOString(),
        guard,
        lapsed: guard !== "calling-in",
        waiters: waitersOn(h.paths, queue, opts)
          .filter((w) => w.intentId !== h.intentId)
          .map((w) => waiterView(queue.find((x) => x.id === w.id)!)),
        releaseRequests: asks
          .filter((a) => a.toIntentId === h.intentId)
          .map((a) => ({
            id: a.id,
            from: partyOf(a.fromIntentId),
            paths: a.paths,
            note: a.note,
            at: a.at.toISOString(),
          })),
      };
    }),
    queue: queue.map(waiterView),
    lost: lostViews,
  };
}

/**
 * A person frees an intent's claim from the Control Room: a human command,
 * recorded and counted like pause, under the repository's lock. The holder
 * is told once (`scope-lost`), the release requests made of it close, and
 * the queue is granted.
 */
export async function releaseScope(
  deps: Deps,
  input: { repo: string; intentId: string; actor: string; reason?: string },
): Promise<ScopeReleaseResult> {
  const repo = await repoByName(deps.store, input.repo);
  return deps.store.tx(async (t) => {
    const intent = await t.intents.head(input.intentId);
    if (!intent || intent.repoId !== repo.id) throw new CohentError("INTENT_NOT_FOUND");
    await t.journal.lock(repo.id);
    const at = deps.clock();
    const reason =
      (input.reason === undefined ? undefined : reasonText(input.reason)) ??
      `Claim released by ${input.actor} from the Control Room.`;
    const released = await loseClaim(
      t,
      repo,
      intent.id,
      {
        reason: "released-by-person",
        by: { intentId: null, person: input.actor, client: null, model: null },
        summary: `scope released by ${input.actor}`,
      },
      at,
    );
    if (!released) throw new CohentError("NOT_HELD", "That work intent holds no claim.");
    await t.sessions.addCommand({
      id: newId("cmd"),
      repoId: repo.id,
      sessionId: intent.sessionId,
      kind: "release",
      actor: input.actor,
      reason,
      at,
    });
    const granted = await grantQueue(t, deps, repo, at);
    return { intentId: intent.id, released, granted };
  });
}
