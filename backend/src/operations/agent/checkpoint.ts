import { normalizeRepoPaths, type CheckpointRequest, type CheckpointResponse } from "@cohent/protocol";
import { newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";
import {
  assertControllable,
  assertControllableNow,
  claimPaths,
  closeIntent,
  withClaim,
} from "../shared/claims.js";
import { checkpointText } from "../shared/free-text.js";
import { issuePacket } from "../shared/packets.js";
import { ownHead } from "../shared/views.js";

/**
 * Checkpoint: progress, a block, or completion. Paths on a working or
 * blocked checkpoint go through the same arbitration as scope and replace
 * the claim; on completion they record what was touched, and the claim is
 * released. A checkpoint carrying a commit (the adapter's `commit`) records
 * the commit and its paths without touching the claim. A paused or cancelled
 * session's claim change is refused as scope's is (found by `cohent torture`:
 * it was granted).
 */
export async function checkpoint(
  deps: Deps,
  caller: Caller,
  sent: CheckpointRequest,
): Promise<CheckpointResponse> {
  const req = checkpointText(sent);
  const { intentId, status, summary, usage } = req;
  const paths = req.paths ? normalizeRepoPaths(req.paths) : null;
  const closing = status === "completed" || status === "abandoned";
  // A commit's paths record what it took: the claim stays as it is.
  const claims = paths && !closing && !req.commit ? paths : null;
  if (claims) assertControllable(caller);
  return withClaim<CheckpointResponse>(deps, caller, intentId, async (t) => {
    // Without a claim the intent is read before the lock; with one, under it, in the claim's round trip.
    let me = claims ? null : await ownHead(t, caller, intentId);
    await t.journal.lock(caller.repo.id);
    if (claims) {
      // Read in the claim's round trip, as scope does: nothing is claimed unless they pass.
      const checks = Promise.all([ownHead(t, caller, intentId), assertControllableNow(t, caller)]);
      const { conflicts } = await claimPaths(t, deps, caller, intentId, claims, checks);
      if (conflicts.length) return { conflicts };
      [me] = await checks;
    }
    const now = deps.clock();
    await t.intents.addCheckpoint({
      id: newId("chk"),
      intentId,
      status,
      summary,
      paths,
      source: req.pathsSource,
      commit: req.commit ?? null,
      at: now,
    });
    await t.intents.update(intentId, { state: status, updatedAt: now, ...(usage ? { usage } : {}) });
    await t.journal.addEvent({
      repoId: caller.repo.id,
      intentId,
      kind: "checkpoint",
      summary: `${status}: ${summary}`,
      at: now,
    });
    if (closing) await closeIntent(t, deps, caller, intentId, status, `${status}: ${summary}`);
    const packet = await issuePacket(t, deps, caller, {
      kind: "checkpoint",
      intentId,
      action: me!.lastAction,
      reason: `Checkpoint recorded (${status}).`,
      peers: [],
      decisions: [],
      changes: [],
    });
    return { intentId, status, paths, ...(req.commit ? { commit: req.commit } : {}), packet };
  });
}
