import { normalizeRepoPaths, type ScopeRequest, type ScopeResponse } from "@cohent/protocol";
import type { Caller, Deps } from "./deps.js";
import { assertControllable, claimPaths, refuseClaim } from "./claims.js";
import { issuePacket } from "./journal.js";
import { ownIntent } from "./views.js";

/**
 * Scope: claims the paths the intent will write, replacing its previous
 * claim. The explicit form of a checkpoint that carries paths.
 */
export async function scope(deps: Deps, caller: Caller, req: ScopeRequest): Promise<ScopeResponse> {
  assertControllable(caller);
  const paths = normalizeRepoPaths(req.paths);
  const result = await deps.db.tx(async (tx) => {
    const me = await ownIntent(tx, caller, req.intentId);
    const { conflicts, replaced } = await claimPaths(tx, deps, caller, req.intentId, paths);
    if (conflicts.length) return { conflicts, response: null };
    const packet = await issuePacket(tx, deps, caller, {
      kind: "scope", intentId: req.intentId, action: me.lastAction as ScopeResponse["packet"]["action"],
      reason: paths.length ? `Scope claimed: ${paths.join(", ")}.` : "Scope released.", peers: [], decisions: [], changes: [],
    });
    return { conflicts: null, response: { intentId: req.intentId, paths, replaced, packet } };
  });
  if (result.conflicts) return refuseClaim(deps, caller, req.intentId, result.conflicts);
  return result.response!;
}
