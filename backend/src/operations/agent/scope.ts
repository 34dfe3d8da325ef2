import { normalizeRepoPaths, type ScopeRequest, type ScopeResponse } from "@cohent/protocol";
import type { Caller, Deps } from "../deps.js";
import { assertControllable, assertControllableNow, claimPaths, withClaim } from "../shared/claims.js";
import { issuePacket } from "../shared/packets.js";
import { queueClaim } from "../shared/queue.js";
import { ownHead } from "../shared/views.js";

/**
 * Scope: claims the paths the intent will write, replacing its previous
 * claim. The explicit form of a checkpoint that carries paths. With
 * `queue`, a refused claim also joins the repository's claim queue (in the
 * same transaction, committed although the answer is a refusal), and the
 * refusal says where it stands.
 */
export async function scope(deps: Deps, caller: Caller, req: ScopeRequest): Promise<ScopeResponse> {
  assertControllable(caller);
  const { intentId } = req;
  const paths = normalizeRepoPaths(req.paths);
  return withClaim<ScopeResponse>(deps, caller, intentId, async (t) => {
    // Read in the claim's round trip: nothing is claimed unless they pass.
    const checks = Promise.all([ownHead(t, caller, intentId), assertControllableNow(t, caller)]);
    const { conflicts, replaced } = await claimPaths(t, deps, caller, intentId, paths, checks);
    const [me] = await checks;
    if (conflicts.length)
      return req.queue
        ? {
            conflicts,
            queued: await queueClaim(
              t,
              caller,
              intentId,
              paths,
              [...new Set(conflicts.flatMap((c) => c.paths))],
              deps.clock(),
            ),
          }
        : { conflicts };
    const packet = await issuePacket(t, deps, caller, {
      kind: "scope",
      intentId,
      action: me.lastAction,
      reason: paths.length ? `Scope claimed: ${paths.join(", ")}.` : "Scope released.",
      peers: [],
      decisions: [],
      changes: [],
    });
    return { intentId, paths, replaced, packet };
  });
}
