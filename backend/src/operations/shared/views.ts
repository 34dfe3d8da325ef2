import { CohentError, type PeerView } from "@cohent/protocol";
import { guardStatus } from "../../core/lease.js";
import type { ResolverIntent } from "../../core/resolver.js";
import type { ActivePeer, IntentRow, Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";

/** The checks every write on an intent makes: it is in the caller's repository, the caller's session owns it, and (by default) it is open. */
function owned<T extends { repoId: string; sessionId: string; closedAt: Date | null; state: string }>(
  intent: T | null,
  caller: Caller,
  id: string,
  open: boolean,
): T {
  if (!intent || intent.repoId !== caller.repo.id) throw new CohentError("INTENT_NOT_FOUND");
  if (intent.sessionId !== caller.session.id) throw new CohentError("NOT_INTENT_OWNER");
  if (open && intent.closedAt)
    throw new CohentError("INTENT_CLOSED", `Work intent ${id} is ${intent.state}; publish a new prompt.`);
  return intent;
}

/** The caller's own intent: it must exist in the caller's repository and belong to the caller's session. */
export async function ownIntent(t: Tx, caller: Caller, id: string, { open = true } = {}): Promise<IntentRow> {
  return owned(await t.intents.get(id), caller, id, open);
}

/** The same checks on the intent's head only (one row, no relations): for the writes that need no more of it. */
export async function ownHead(t: Tx, caller: Caller, id: string, { open = true } = {}) {
  return owned(await t.intents.head(id), caller, id, open);
}

export const toResolverIntent = (row: ActivePeer): ResolverIntent => ({
  id: row.id,
  // Placed with its first record; an intent without one takes part in no rule.
  place: row.place ?? Infinity,
  status: row.state === "completed" ? "completed" : "active",
  record: row.record,
  ...(row.lastAction === "duplicate" || row.lastAction === "handoff" ? { standsDown: true } : {}),
});

export const toPeerView = (row: IntentRow, deps: Deps): PeerView => ({
  intentId: row.id,
  person: row.person,
  client: row.client,
  model: row.model,
  prompt: row.prompt,
  state: row.state as PeerView["state"],
  intent: row.record,
  scope: row.scope,
  lastCheckpoint: row.lastCheckpoint,
  guard: guardStatus(row.session.lastSeenAt, deps.clock(), deps.lease),
  updatedAt: row.updatedAt.toISOString(),
});
