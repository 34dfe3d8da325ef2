import { matchBudget, scopeOverlap, type IntentRecord, type MatchOptions } from "@cohent/protocol";

interface Work {
  id: string;
  record: IntentRecord | null;
  scope: readonly string[];
}

/**
 * A record's linking names, folded, once per record object: the store shares one object per record text
 * (store/rows recordOf), and a full poll relates every active peer's record to its own.
 */
const namesOf = new WeakMap<IntentRecord, readonly string[]>();
const names = (r: IntentRecord): readonly string[] => {
  let n = namesOf.get(r);
  if (!n) namesOf.set(r, (n = [...r.outputs, ...r.dependsOn, ...r.deferred].map((x) => x.toLowerCase())));
  return n;
};

/**
 * The peers a poll reports on: those its decision named, those whose claim
 * overlaps its own, and those linked to it by an output, dependency or
 * deferred name.
 */
export function relatedPeers(
  me: Work & { record: IntentRecord },
  peers: readonly Work[],
  named: readonly string[],
  opts: MatchOptions,
): Set<string> {
  const related = new Set(named);
  const mine = new Set(names(me.record));
  // One budget for the room: past it, unsure means related (the poll reports one peer too many).
  if (!opts.budget) opts = { ...opts, budget: matchBudget() };
  for (const peer of peers) {
    if (peer.record && names(peer.record).some((n) => mine.has(n))) related.add(peer.id);
    if (me.scope.length && peer.scope.length && scopeOverlap(me.scope, peer.scope, opts).length)
      related.add(peer.id);
  }
  return related;
}

/**
 * Of the change log after a cursor: my own decisions and control commands, related peers' changes, and changes that name me.
 * A `notice` entry only wakes the recipient: the notice itself reaches it through its packet's notices.
 */
export function isRelevant(
  e: { intentId: string; kind: string; peerIds: readonly string[] },
  meId: string,
  related: ReadonlySet<string>,
): boolean {
  if (e.kind === "notice") return false;
  return e.intentId === meId
    ? e.kind === "decision" || e.kind === "control"
    : related.has(e.intentId) || e.peerIds.includes(meId);
}
