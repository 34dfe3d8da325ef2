import type { StatusResponse } from "@cohent/protocol";
import { guardStatus } from "../../core/lease.js";
import type { Caller, Deps } from "../deps.js";

/**
 * Status: the open work of this token's person, one row per intent, with the
 * guard status of the session that announced it. Reading it renews only the
 * caller's own session (doctor uses a session of its own), never theirs.
 */
export async function status(deps: Deps, caller: Caller): Promise<StatusResponse> {
  const rows = await deps.store.intents.openOfToken(caller.repo.id, caller.token.id);
  const now = deps.clock();
  return {
    person: caller.token.person,
    intents: rows.map((r) => ({
      intentId: r.id,
      sessionKey: r.session.key,
      client: r.client,
      model: r.model,
      state: r.state,
      action: r.lastAction,
      guard: guardStatus(r.session.lastSeenAt, now, deps.lease),
      control: r.session.control,
      lastCallAt: r.session.lastSeenAt.toISOString(),
      objective: r.record?.objective ?? null,
      scope: r.scope,
    })),
  };
}
