import type { Changes } from "./changes.js";
import type { ConsoleAuth, Pairings, Repos, Requests, Sessions, Tokens, Wiring } from "./contract-access.js";
import type { Journal, Notices } from "./contract-journal.js";
import type { Reads } from "./contract-reads.js";
import type { RepoPages, Retention } from "./contract-upkeep.js";
import type { Claims, Intents, Queue, ReleaseAsks } from "./contract-work.js";
import type { Provider } from "./db.js";

/**
 * The store's contract: every method the operations may call, declared here
 * and implemented once (one factory per concern, store/<concern>.ts, on the
 * SQL layer of store/sql), in the manner of Beads' internal/storage. The row
 * types are the schema's (store/sql/tables, checked against Prisma's model
 * types); the test/contract suite runs every method on SQLite and PostgreSQL.
 * Outside `tx` each statement commits on its own; inside, all of them commit
 * or none does.
 */

export type * from "./contract-rows.js";
export type * from "./contract-access.js";
export type * from "./contract-work.js";
export type * from "./contract-journal.js";
export type * from "./contract-reads.js";
export type * from "./contract-upkeep.js";

/** Every query, one interface per concern, over one connection or one transaction. */
export interface Tx {
  repos: Repos;
  intents: Intents;
  claims: Claims;
  journal: Journal;
  tokens: Tokens;
  sessions: Sessions;
  pairings: Pairings;
  consoleAuth: ConsoleAuth;
  reads: Reads;
  queue: Queue;
  notices: Notices;
  releaseAsks: ReleaseAsks;
  wiring: Wiring;
  requests: Requests;
  repoPages: RepoPages;
  retention: Retention;
}

/** The store: its concerns run outside a transaction (one statement each), and `tx` runs them as one. */
export interface Store extends Tx {
  provider: Provider;
  /** Change hints and the high-water cursor of each repository. */
  changes: Changes;
  /**
   * Runs `fn` as one transaction: the one transaction function. Every operation that writes is
   * one. With `batch` (a repository's id), it may share its transaction with other writes to that
   * repository, in a savepoint of its own (store/batch).
   */
  tx<T>(fn: (t: Tx) => Promise<T>, opts?: { batch?: string }): Promise<T>;
  /** One round trip to the database, for readiness: throws when it cannot be reached. */
  ping(): Promise<void>;
}
