import {
  BOUNDS,
  CohentError,
  matchBudget,
  normalizeRepoPaths,
  overRoomBudget,
  redact,
  scopeOverlap,
  type ReleaseRequest,
  type ReleaseRequestResponse,
} from "@cohent/protocol";
import { arbitrate } from "../../core/arbitrate.js";
import { Buckets } from "../../http/rate-limit.js";
import { newId } from "../../ids.js";
import type { Store } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { assertControllable, assertControllableNow } from "../shared/claims.js";
import { freeExpired, grantQueue, noticePeer, notify } from "../shared/queue.js";
import { ownHead } from "../shared/views.js";
import { baseStore } from "../../store/identity.js";

/** Per requesting session, in this instance's memory (like the per-token limit: N instances allow N times). */
const limits = new WeakMap<Store, Buckets>();
const bucketsOf = (store: Store) => {
  let b = limits.get(baseStore(store));
  if (!b)
    limits.set(
      baseStore(store),
      (b = new Buckets({
        perSecond: BOUNDS.releaseRequestsPerMinute / 60,
        burst: BOUNDS.releaseRequestsPerMinute,
      })),
    );
  return b;
};

/** The note as a holder reads it: redacted, one paragraph, no control or direction-override characters, well-formed, bounded. */
export function releaseNote(raw: string): string {
  const text = redact(raw)
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .replace(/[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]+/g, " ")
    .trim();
  if (text.length <= BOUNDS.releaseNoteChars) return text;
  // Cut on a code point, never inside a surrogate pair.
  let cut = text.slice(0, BOUNDS.releaseNoteChars - 1);
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return cut + "…";
}

/**
 * Release request: asks the holders of `paths` to let go. Each holder
 * overlapping them (the same arbitration as a claim) gets one ask and a
 * `release-requested` notice in its next packet, with the requester's note
 * as untrusted peer text and the exact commands to narrow or release. The
 * answer is the holder's: an ordinary scope change, which honours the ask.
 * NOT_HELD when no peer holds any of the paths; RATE_LIMITED past
 * BOUNDS.releaseRequestsPerMinute per session.
 */
export async function releaseRequest(
  deps: Deps,
  caller: Caller,
  req: ReleaseRequest,
): Promise<ReleaseRequestResponse> {
  assertControllable(caller);
  // Bad paths are refused before they spend one of the session's release requests.
  const paths = normalizeRepoPaths(req.paths);
  const wait = bucketsOf(deps.store).take(caller.session.id);
  if (wait > 0)
    throw new CohentError(
      "RATE_LIMITED",
      `At most ${BOUNDS.releaseRequestsPerMinute} release requests a minute; retry after ${wait} s.`,
      { retryAfterSeconds: wait },
    );
  const { intentId } = req;
  const note = releaseNote(req.note);
  const repo = caller.repo;
  const opts = { caseInsensitive: repo.caseInsensitive };
  return deps.store.tx(
    async (t) => {
      await Promise.all([ownHead(t, caller, intentId), assertControllableNow(t, caller)]);
      await t.journal.lock(repo.id);
      const now = deps.clock();
      if (await freeExpired(t, deps, repo, now)) await grantQueue(t, deps, repo, now);
      const holders = (await t.queue.holders(repo.id)).filter((h) => h.intentId !== intentId);
      const budget = matchBudget();
      const conflicts = arbitrate(paths, holders, { ...opts, budget });
      if (budget.steps <= 0) throw overRoomBudget(paths, holders.length);
      if (!conflicts.length)
        throw new CohentError("NOT_HELD", `No peer holds any of ${paths.join(", ")}.`, { paths });
      const from = noticePeer({
        intentId,
        person: caller.token.person,
        client: caller.session.client ?? caller.token.client,
        model: caller.session.model,
      });
      for (const c of conflicts) {
        const holder = holders.find((h) => h.intentId === c.intentId)!;
        await t.releaseAsks.add({
          id: newId("rra"),
          repoId: repo.id,
          fromIntentId: intentId,
          toIntentId: holder.intentId,
          paths: c.paths,
          note,
          at: now,
        });
        await notify(
          t,
          repo.id,
          holder,
          {
            kind: "release-requested",
            paths: c.paths,
            peer: from,
            note: note || null,
            keep: holder.paths.filter((p) => scopeOverlap([p], paths, opts).length === 0),
          },
          now,
        );
      }
      await t.journal.addEvent({
        repoId: repo.id,
        intentId,
        kind: "release.requested",
        summary: `asked ${conflicts.map((c) => c.intentId).join(", ")} to release ${paths.join(", ")}`,
        at: now,
      });
      return {
        intentId,
        asked: conflicts.map((c) => ({
          intentId: c.intentId,
          person: c.person,
          client: c.client,
          model: c.model,
          paths: c.paths,
        })),
      };
    },
    { batch: caller.repo.id },
  );
}
