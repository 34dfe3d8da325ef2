import { IntentRecord, type Action, type Control, type Decision, type Party } from "@cohent/protocol";
import type { PeerClaim } from "../core/arbitrate.js";
import type { Prisma } from "../generated/sqlite/client.js";

// JSON-in-text columns are decoded here, once; nothing outside the store sees their text.
export const list = (text: string | null | undefined): string[] =>
  text ? (JSON.parse(text) as string[]) : [];
/**
 * Records parsed once per distinct text: every resolve loads every active
 * intent's record, and the resolver folds each record object once (its
 * WeakMap), so the same object for the same text saves both. Read-only by use.
 */
const parsed = new Map<string, IntentRecord>();
export const recordOf = (text: string | null | undefined): IntentRecord | null => {
  if (!text) return null;
  let record = parsed.get(text);
  if (!record) {
    if (parsed.size >= 50_000) parsed.clear();
    parsed.set(text, (record = IntentRecord.parse(JSON.parse(text))));
  }
  return record;
};
export const json = (value: unknown): string => JSON.stringify(value);
/**
 * A checkpoint's `source` says where its paths came from; a commit's checkpoint
 * holds "commit:<hash>" there (no column of its own: no migration).
 */
export const commitSource = (hash: string): string => `commit:${hash}`;
export const commitOf = (source: string | null | undefined): string | null =>
  source?.startsWith("commit:") ? source.slice(7) : null;
export const toCommit = (k: { source: string; paths: string | null; summary: string; createdAt: Date }) => ({
  hash: commitOf(k.source) ?? "",
  paths: list(k.paths),
  summary: k.summary,
  at: k.createdAt.toISOString(),
});

export const intentInclude = {
  session: { select: { key: true, lastSeenAt: true, control: true, controlReason: true } },
  claim: { select: { paths: true } },
  checkpoints: { orderBy: { createdAt: "desc" as const }, take: 1 },
};

/** A work intent with what every reader shows of it: its claim, its last checkpoint, its session's liveness. */
export function toIntent(r: Prisma.IntentGetPayload<{ include: typeof intentInclude }>) {
  const cp = r.checkpoints[0];
  return {
    id: r.id,
    repoId: r.repoId,
    sessionId: r.sessionId,
    person: r.person,
    client: r.client,
    model: r.model,
    prompt: r.prompt,
    promptPaths: list(r.promptPaths),
    record: recordOf(r.record),
    state: r.state,
    lastAction: r.lastAction as Action,
    place: r.place,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    closedAt: r.closedAt,
    scope: list(r.claim?.paths), // the paths it claims now
    lastCheckpoint: cp ? { status: cp.status, summary: cp.summary, at: cp.createdAt.toISOString() } : null,
    session: { ...r.session, control: r.session.control as Control },
  };
}

export type IntentRow = ReturnType<typeof toIntent>;

export function toDecision(r: {
  id: string;
  intentId: string;
  action: string;
  peerIds: string;
  reason: string;
  createdAt: Date;
}): Decision {
  return {
    id: r.id,
    intentId: r.intentId,
    action: r.action as Action,
    peerIds: list(r.peerIds),
    reason: r.reason,
    at: r.createdAt.toISOString(),
  };
}

/** Who an intent is, for conflict and overview texts. */
export const toParty = (r: {
  id: string;
  person: string;
  client: string | null;
  model: string | null;
  record: string | null;
}): Party => ({
  intentId: r.id,
  person: r.person,
  client: r.client,
  model: r.model,
  objective: recordOf(r.record)?.objective ?? null,
});
export const toPeerClaim = (c: {
  intentId: string;
  paths: string;
  intent: { person: string; client: string | null; model: string | null; record: string | null };
}): PeerClaim => ({
  ...toParty({ id: c.intentId, ...c.intent }),
  paths: list(c.paths),
});
