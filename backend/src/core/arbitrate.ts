import {
  exhausted,
  matchBudget,
  scopeOverlap,
  type MatchOptions,
  type ScopeConflict,
} from "@cohent/protocol";

/** A peer's current claim: its intent and paths. */
export interface Claimed {
  intentId: string;
  paths: string[];
}

/** A peer's current claim, with the identity a human recognizes. */
export interface PeerClaim extends Claimed {
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}

/** One peer's claim that a proposed scope overlaps, and through which paths of each. */
export interface Overlap<P extends Claimed> {
  peer: P;
  paths: string[];
  theirPaths: string[];
}

/**
 * Scope arbitration, pure: which active peer claims does a proposed scope
 * overlap, and through which paths. The caller holds the repository's claim
 * lock while it asks, so the answer stays true until it writes.
 *
 * All peers share one matching budget (`opts.budget`, else a fresh one):
 * past it every comparison counts as an overlap, so a room full of costly
 * claims slows no request; the caller sees the budget spent and refuses.
 */
export function arbitrate(
  mine: readonly string[],
  peers: readonly PeerClaim[],
  opts: MatchOptions = {},
): ScopeConflict[] {
  return overlaps(mine, peers, opts).map((o) => conflictOf(o.peer, o));
}

/** The arbitration itself, on claims with or without their holders: the overlapped ones, in the peers' order. */
export function overlaps<P extends Claimed>(
  mine: readonly string[],
  peers: readonly P[],
  opts: MatchOptions = {},
): Overlap<P>[] {
  const found: Overlap<P>[] = [];
  if (!mine.length) return found;
  if (!opts.budget) opts = { ...opts, budget: matchBudget() };
  for (const peer of peers) {
    if (!peer.paths.length) continue;
    // Out of budget: every remaining peer counts as overlapping, through everything, at no further cost.
    if (exhausted(opts.budget!)) {
      found.push({ peer, paths: [...new Set(mine)], theirPaths: [...new Set(peer.paths)] });
      continue;
    }
    const pairs = scopeOverlap(mine, peer.paths, opts);
    if (pairs.length === 0) continue;
    found.push({
      peer,
      paths: [...new Set(pairs.map((p) => p.mine))],
      theirPaths: [...new Set(pairs.map((p) => p.theirs))],
    });
  }
  return found;
}

/** An overlap as the conflict a caller is told of: the holder's identity and the paths on each side. */
export function conflictOf(holder: PeerClaim, o: { paths: string[]; theirPaths: string[] }): ScopeConflict {
  return {
    intentId: holder.intentId,
    person: holder.person,
    client: holder.client,
    model: holder.model,
    objective: holder.objective,
    paths: o.paths,
    theirPaths: o.theirPaths,
  };
}

export function describeConflicts(conflicts: readonly ScopeConflict[]): string {
  return conflicts
    .map((c) => {
      const who = [c.person, c.client, c.model].filter(Boolean).join(" / ");
      return `${c.paths.join(", ")} overlaps ${who}'s scope ${c.theirPaths.join(", ")} (${c.intentId})`;
    })
    .join("; ");
}
