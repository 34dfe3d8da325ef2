// The repository list's pages and the retention rule (store/contract): reads over every repository, and
// the pruning of old rows, each in its own file (store/repo-pages, store/retention).

/** One repository as the list shows it, read for a page's names only. */
export interface RepoPageRow {
  id: string;
  name: string;
  goal: string;
  openIntents: number;
  activeTokens: number;
  /** Holders of active tokens, in the order of their first token. */
  people: string[];
  lastActivityAt: Date | null;
}

export interface RepoPages {
  /**
   * The names holding `q` (case-insensitive, `%` and `_` literal), by name: how many in all, and those
   * from `offset`, at most `limit` of them (null: every one, for a filter the database cannot apply).
   */
  matching(q: string, offset: number, limit: number | null): Promise<{ total: number; names: string[] }>;
  /** The list's row of each of these names that is registered, by name. */
  summaries(names: string[]): Promise<RepoPageRow[]>;
  /**
   * Moves whenever what one repository's pages show changes: its change log, and what changes outside
   * it (sessions' calls, tokens, pairings asking for it, guard catches, wiring reports, its goal).
   */
  fingerprint(repoId: string): Promise<string>;
}

/** The tables the retention rule prunes: decisions, notices, and the usage rows (packets, guard catches). */
export type Pruned = "decisions" | "notices" | "packets" | "catches";

export interface Retention {
  /**
   * Deletes at most `take` rows of `table` made before `before`, oldest first, and answers how many. A
   * decision or an untold notice of an intent still open is kept: they are its current state.
   */
  prune(table: Pruned, before: Date, take: number): Promise<number>;
}
