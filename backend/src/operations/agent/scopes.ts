import type { ScopesResponse } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import type { Caller, Deps } from "../deps.js";

/**
 * Scopes: the claims of every other live intent in the repository, for the
 * adapter's Git guard and `commit` (which changed paths are a peer's). The
 * cheapest read that names them all: no resolver run, no packet. A claim
 * whose session's lease expired no longer counts, as in arbitration.
 */
export async function scopes(deps: Deps, caller: Caller): Promise<ScopesResponse> {
  return deps.store.tx(async (t) => {
    const expired = new Set(await t.claims.expired(caller.repo.id, leaseCutoff(deps.clock(), deps.lease)));
    const own = new Set(await t.intents.openIdsOfSession(caller.session.id));
    const claims = await t.claims.peers(caller.repo.id, "");
    return {
      peers: claims
        .filter((c) => !expired.has(c.intentId) && !own.has(c.intentId) && c.paths.length > 0)
        .map((c) => ({
          intentId: c.intentId,
          person: c.person,
          client: c.client,
          model: c.model,
          objective: c.objective,
          paths: c.paths,
        })),
    };
  });
}
