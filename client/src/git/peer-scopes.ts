import { matchBudget, overBound, scopeCovers, scopeOverlap, type MatchBudget } from "@cohent/protocol/paths";

/**
 * The active peers' scopes as the service lists them, and whose a path is
 * among them: read by the Git guard, the shell hold and the commit operation.
 */

export interface PeerScope {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  /** What the peer works on (its intent's objective, redacted by the service), when it published one. */
  objective?: string | null;
  paths: string[];
}

export interface Scopes {
  /** The caller's scope patterns. */
  own: string[];
  /** Active peers' scopes (the brief's peers). */
  peers: PeerScope[];
}

/**
 * Whose a changed path is: "own" (own scope or unclaimed) or the peer whose
 * scope covers it. Peers' claims are compared within `budget` (one per
 * command, shared by its paths): past it, or for a peer pattern over the
 * path bounds (taken as its base directory), a path counts as the peer's.
 * Fail closed: a costly peer claim cannot slow the hook, only refuse.
 */
export function ownerOf(
  path: string,
  scopes: Scopes,
  dir = false,
  budget: MatchBudget = matchBudget(),
): "own" | PeerScope {
  if (scopeCovers(scopes.own, path)) return "own";
  const opts = { budget };
  for (const peer of scopes.peers) {
    if (scopeCovers(peer.paths, path, opts) || (dir && scopeOverlap([path], peer.paths, opts).length > 0))
      return peer;
  }
  return "own";
}

/** Why the guard may have counted a path as a peer's without being sure, for the reason; "" when it was sure. */
export function unsureNote(peers: readonly PeerScope[], budget: MatchBudget): string {
  const notes: string[] = [];
  for (const p of peers)
    for (const pattern of p.paths.slice(0, 64)) {
      const why = overBound(pattern);
      if (why)
        notes.push(`${inert(p.person)}'s claim ${inert(pattern, 60)} (${why}) counts as its whole directory`);
    }
  if (budget.steps <= 0)
    notes.push("comparing with peers' claims took over the matching bound, so the rest counted as theirs");
  return notes.length ? ` (Unsure, so refused: ${[...new Set(notes)].slice(0, 3).join("; ")}.)` : "";
}

/** Peer-supplied text in a reason: one line, bounded, no control characters. */
export function inert(s: string | null | undefined, max = 80): string {
  return String(s ?? "")
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .slice(0, max);
}
