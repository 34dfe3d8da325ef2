/**
 * A stale write (issue 50, item 3): a write that names a file whose bytes
 * another session changed since this session last read it. The decision
 * asks `staleWrites` for a call's write targets and, when it returns any,
 * refuses with `staleReason` (rule `stale-write`).
 *
 * Interface first: the body is still to come (it returns none today).
 */

/** One target changed since this session last read it, and by whom. */
export interface StaleWrite {
  /** Repository-relative POSIX path. */
  path: string;
  /** The session that changed it, with its intent where known. */
  by: { sessionId: string; intentId: string | null; person: string | null; objective: string | null };
  /** When it changed (ms since the epoch). */
  at: number;
  /** The changed line ranges of the current bytes, 1-based and inclusive; empty when unknown (binary, past the bound). */
  lines: [number, number][];
}

/** The targets of a write by `sessionId` that are stale. Never throws; sync and cheap (a stat per target in the steady state). */
export function staleWrites(_root: string, _sessionId: string, _targets: readonly string[]): StaleWrite[] {
  return [];
}

/** The refusal's words for the model: the peer, its intent, when, the changed lines, and to read the file again. */
export function staleReason(stale: readonly StaleWrite[]): string {
  const paths = stale.map((x) => x.path).join(", ");
  return `${paths} changed since this session last read it. Read it again, then make the change over the current bytes.`;
}
