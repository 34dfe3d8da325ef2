import { GUIDANCE, type Action, type IntentRecord } from "@cohent/protocol";

/**
 * The deterministic resolver: a pure function over the caller and the other
 * intents of the repository. It acts only on agent-authored signals, in the
 * spec's order; the first rule that matches wins. Ambiguous relationships
 * answer proceed, because path arbitration remains the safety layer.
 */

export interface ResolverIntent {
  id: string;
  /**
   * Its place in the repository's decisions: taken under the repository lock
   * (store) each time it declares a record, so the one deciding now is the
   * latest. With the id it orders "earlier" work. Publish time does not: two
   * instances can decide the later published intent first, and a decision
   * made must not be contradicted by the next one.
   */
  place: number;
  /** Open work whose session still holds its lease, or completed work. */
  status: "active" | "completed";
  record: IntentRecord | null;
  /**
   * Answered duplicate or handoff: it stands down from its outputs, so no one
   * waits on them, and it owns no objective a later intent would duplicate;
   * it comes after every peer that does not stand down (duplicateRule).
   */
  standsDown?: boolean;
}

export interface Resolution {
  action: Action;
  rule: "no-intent" | "wait" | "duplicate" | "handoff" | "parallel" | "completed-dependency" | "none";
  /** Peers the answer is about, earliest first. */
  peerIds: string[];
  /** The names that matched (outputs, capabilities, components). */
  names: string[];
  reason: string;
}

const key = (name: string) => name.toLowerCase();

/** Names folded once per intent: rules compare thousands of peers, so they must not allocate per comparison. */
interface Folded {
  components: Set<string>;
  dependsOn: Set<string>;
  deferred: Set<string>;
  outputs: Set<string>;
  requires: Set<string>;
  capabilities: Set<string>;
}
const folded = new WeakMap<IntentRecord, Folded>();
function fold(record: IntentRecord): Folded {
  let f = folded.get(record);
  if (!f) {
    const set = (names: readonly string[]) => new Set(names.map(key));
    f = {
      components: set(record.components),
      dependsOn: set(record.dependsOn),
      deferred: set(record.deferred),
      outputs: set(record.outputs),
      requires: set(record.requires),
      capabilities: set(record.capabilities),
    };
    folded.set(record, f);
  }
  return f;
}
function shared(a: Set<string>, b: Set<string>): string[] {
  const out: string[] = [];
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) out.push(x);
  return out.sort();
}

/** "Build  sign-in states." and "build sign-in states" are the same objective. */
export function sameObjective(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/\s+/g, " ")
      .replace(/[.!?;:,\s]+$/, "")
      .trim();
  return norm(a) === norm(b);
}

/** By place, then id; compared, not subtracted (an unplaced intent's place may be Infinity). */
function byAge(a: ResolverIntent, b: ResolverIntent): number {
  if (a.place !== b.place) return a.place < b.place ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const earlier = (a: ResolverIntent, b: ResolverIntent): boolean => byAge(a, b) < 0;

type Match = { peer: ResolverIntent; names: string[] };
type Rule = (
  me: ResolverIntent & { record: IntentRecord },
  peer: ResolverIntent & { record: IntentRecord },
) => string[] | null;

/** 1. An active output named in dependsOn. */
export const waitRule: Rule = (me, peer) => {
  if (peer.status !== "active" || peer.standsDown) return null;
  const names = shared(fold(me.record).dependsOn, fold(peer.record).outputs);
  return names.length ? names : null;
};

/**
 * 2. The same objective and output, already owned by earlier active work. An
 * active peer that does not stand down owns what it declared; it is earlier
 * than me when placed before me, or when I stand down myself (I gave the
 * objective up, so whoever took it since keeps it; my place does not win it back).
 */
export const duplicateRule: Rule = (me, peer) => {
  if (peer.status !== "active" || peer.standsDown) return null;
  if (!me.standsDown && !earlier(peer, me)) return null;
  const names = shared(fold(me.record).outputs, fold(peer.record).outputs);
  if (!names.length || !sameObjective(me.record.objective, peer.record.objective)) return null;
  return names.length ? names : null;
};

/** 3. A required capability I lack, reported by an active peer. */
export const handoffRule: Rule = (me, peer) => {
  if (peer.status !== "active") return null;
  const mine = fold(me.record);
  const missing = new Set([...mine.requires].filter((c) => !mine.capabilities.has(c)));
  const names = shared(missing, fold(peer.record).capabilities);
  return names.length ? names : null;
};

/** 4. A shared component with separate outputs, or an output I deferred. */
export const parallelRule: Rule = (me, peer) => {
  if (peer.status !== "active") return null;
  const mine = fold(me.record);
  const theirs = fold(peer.record);
  const deferred = shared(mine.deferred, theirs.outputs);
  if (deferred.length) return deferred;
  const components = shared(mine.components, theirs.components);
  if (components.length && shared(mine.outputs, theirs.outputs).length === 0) return components;
  return null;
};

/** 5. A dependency that a completed peer produced. */
export const completedDependencyRule: Rule = (me, peer) => {
  if (peer.status !== "completed") return null;
  const names = shared(fold(me.record).dependsOn, fold(peer.record).outputs);
  return names.length ? names : null;
};

/** The rules in the spec's order; the first that matches wins. */
const RULES: { rule: Resolution["rule"]; action: Action; match: Rule }[] = [
  { rule: "wait", action: "wait", match: waitRule },
  { rule: "duplicate", action: "duplicate", match: duplicateRule },
  { rule: "handoff", action: "handoff", match: handoffRule },
  { rule: "parallel", action: "parallel", match: parallelRule },
  { rule: "completed-dependency", action: "proceed", match: completedDependencyRule },
];

/** At most three ids in a reason; the decision's peerIds carry them all. */
const listIds = (ids: readonly string[]) =>
  ids.length > 3 ? `${ids.slice(0, 3).join(", ")} and ${ids.length - 3} more` : ids.join(", ");

/** The reason: the action, its one guidance text (protocol/actions), and what matched with whom. */
function reasonOf(rule: Resolution["rule"], action: Action, names = "", peers = ""): string {
  if (rule === "completed-dependency")
    return `Proceed: ${names} was completed by ${peers}; its completed state is attached.`;
  const head = `${action[0]!.toUpperCase()}${action.slice(1)}: ${GUIDANCE[action]}`;
  return peers ? `${head} (${names}: ${peers})` : head;
}

export function resolve(me: ResolverIntent, others: readonly ResolverIntent[]): Resolution {
  if (!me.record) {
    return {
      action: "plan",
      rule: "no-intent",
      peerIds: [],
      names: [],
      reason: reasonOf("no-intent", "plan"),
    };
  }
  const self = me as ResolverIntent & { record: IntentRecord };
  const peers = others
    .filter((p): p is ResolverIntent & { record: IntentRecord } => p.id !== me.id && p.record !== null)
    .sort(byAge);
  for (const { rule, action, match } of RULES) {
    const matches: Match[] = [];
    for (const peer of peers) {
      const names = match(self, peer);
      if (names) matches.push({ peer, names });
    }
    if (matches.length === 0) continue;
    const names = [...new Set(matches.flatMap((m) => m.names))];
    const peerIds = matches.map((m) => m.peer.id);
    return {
      action,
      rule,
      peerIds,
      names,
      reason: reasonOf(rule, action, names.map((n) => `"${n}"`).join(", "), listIds(peerIds)),
    };
  }
  return { action: "proceed", rule: "none", peerIds: [], names: [], reason: reasonOf("none", "proceed") };
}
