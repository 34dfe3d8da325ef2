import {
  exhausted,
  matchBudget,
  scopeOverlap,
  type MatchOptions,
  type ScopeConflict,
} from "@cohent/protocol";

/** A peer's current claim, with the identity a human recognizes. */
export interface PeerClaim {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
  paths: string[];
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
  const conflicts: ScopeConflict[] = [];
  if (!mine.length) return conflicts;
  if (!opts.budget) opts = { ...opts, budget: matchBudget() };
  for (const peer of peers) {
    if (!peer.paths.length) continue;
    const who = {
      intentId: peer.intentId,
      person: peer.person,
      client: peer.client,
      model: peer.model,
      objective: peer.objective,
    };
    // Out of budget: every remaining peer counts as overlapping, through everything, at no further cost.
    if (exhausted(opts.budget!)) {
      conflicts.push({ ...who, paths: [...new Set(mine)], theirPaths: [...new Set(peer.paths)] });
      continue;
    }
    const pairs = scopeOverlap(mine, peer.paths, opts);
    if (pairs.length === 0) continue;
    conflicts.push({
      ...who,
      paths: [...new Set(pairs.map((p) => p.mine))],
      theirPaths: [...new Set(pairs.map((p) => p.theirs))],
    });
  }
  return conflicts;
}

export function describeConflicts(conflicts: readonly ScopeConflict[]): string {
  return conflicts
    .map((c) => {
      const who = [c.person, c.client, c.model].filter(Boolean).join(" / ");
      return `${c.paths.join(", ")} overlaps ${who}'s scope ${c.theirPaths.join(", ")} (${c.intentId})`;
    })
    .join("; ");
}
