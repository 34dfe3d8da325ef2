import { IntentRecord, type Action, type Decision, type Party } from "@cohent/protocol";

// JSON-in-text columns are decoded here, once; nothing outside the store sees their text.
export const list = (text: string | null | undefined): string[] =>
  text ? (JSON.parse(text) as string[]) : [];

/**
 * A claim's paths parsed once per distinct text: every scope and every checkpoint with paths reads every
 * claim of the room, and every full poll every active intent's, and the same array for the same text is
 * also found by identity by the path matcher (protocol compiledScope: no search of its cache). 200
 * peers' claims: 0.50 -> 0.17 ms per arbitration. Frozen, being shared by every reader: read-only by use,
 * and a write would throw.
 */
const parsedLists = new Map<string, string[]>();
const NONE: string[] = Object.freeze([]) as unknown as string[];
export const sharedList = (text: string | null | undefined): string[] => {
  if (!text) return NONE;
  let paths = parsedLists.get(text);
  if (!paths) {
    if (parsedLists.size >= 20_000) parsedLists.clear(); // memory, not state: start over rather than grow
    parsedLists.set(text, (paths = Object.freeze(list(text)) as string[]));
  }
  return paths;
};
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
