import { CohentError, IntentRecord, type Change, type Decision, type PeerView } from "@cohent/protocol";
import { guardStatus, leaseCutoff } from "../lease.js";
import type { ResolverIntent } from "../resolver.js";
import type { Tx } from "../store/db.js";
import type { Caller, Deps } from "./deps.js";
import { parseJson } from "./json.js";

export const intentInclude = {
  session: { select: { lastSeenAt: true, control: true } },
  claim: { select: { paths: true } },
  checkpoints: { orderBy: { createdAt: "desc" as const }, take: 1 },
};

type IntentRow = NonNullable<Awaited<ReturnType<typeof loadIntent>>>;

export function loadIntent(tx: Tx, id: string) {
  return tx.intent.findUnique({ where: { id }, include: intentInclude });
}

/** The caller's own intent: it must exist in the caller's repository and belong to the caller's session. */
export async function ownIntent(tx: Tx, caller: Caller, id: string, { open = true } = {}): Promise<IntentRow> {
  const intent = await loadIntent(tx, id);
  if (!intent || intent.repoId !== caller.repo.id) throw new CohentError("INTENT_NOT_FOUND");
  if (intent.sessionId !== caller.session.id) throw new CohentError("NOT_INTENT_OWNER");
  if (open && intent.closedAt) throw new CohentError("INTENT_CLOSED", `Work intent ${id} is ${intent.state}; publish a new prompt.`);
  return intent;
}

/** Open intents whose session still holds its lease: the "active" work of a repository. */
export function loadActiveIntents(tx: Tx, deps: Deps, repoId: string) {
  return tx.intent.findMany({
    where: { repoId, closedAt: null, session: { lastSeenAt: { gte: leaseCutoff(deps.clock(), deps.lease) } } },
    include: intentInclude,
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

const COMPLETED_WINDOW = 200;
/** Recently completed work, for the resolver's completed-dependency rule. */
export function loadCompletedIntents(tx: Tx, repoId: string) {
  return tx.intent.findMany({
    where: { repoId, state: "completed" },
    include: intentInclude,
    orderBy: { closedAt: "desc" },
    take: COMPLETED_WINDOW,
  });
}

export function recordOf(row: { record: string | null }): IntentRecord | null {
  return row.record ? IntentRecord.parse(JSON.parse(row.record)) : null;
}

export function toResolverIntent(row: IntentRow): ResolverIntent {
  return { id: row.id, createdAt: row.createdAt.getTime(), status: row.state === "completed" ? "completed" : "active", record: recordOf(row) };
}

export function toPeerView(row: IntentRow, deps: Deps): PeerView {
  const cp = row.checkpoints[0];
  return {
    intentId: row.id,
    person: row.person,
    client: row.client,
    model: row.model,
    prompt: row.prompt,
    state: row.state as PeerView["state"],
    intent: recordOf(row),
    scope: parseJson<string[]>(row.claim?.paths, []),
    lastCheckpoint: cp ? { status: cp.status, summary: cp.summary, at: cp.createdAt.toISOString() } : null,
    guard: guardStatus(row.session.lastSeenAt, deps.clock(), deps.lease),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toDecision(row: { id: string; intentId: string; action: string; peerIds: string; reason: string; createdAt: Date }): Decision {
  return {
    id: row.id,
    intentId: row.intentId,
    action: row.action as Decision["action"],
    peerIds: parseJson<string[]>(row.peerIds, []),
    reason: row.reason,
    at: row.createdAt.toISOString(),
  };
}

export function toChange(row: { seq: number; kind: string; intentId: string; summary: string; createdAt: Date }): Change {
  return { cursor: String(row.seq), kind: row.kind, intentId: row.intentId, summary: row.summary, at: row.createdAt.toISOString() };
}
