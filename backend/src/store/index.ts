import { claims } from "./claims.js";
import { openDb, type Db, type PrismaTx, type Provider } from "./db.js";
import { intents } from "./intents.js";
import { journal } from "./journal.js";
import { migrate } from "./migrate.js";
import { consoleAuth, pairings } from "./people.js";
import { reads } from "./reads.js";
import { repos } from "./repos.js";
import { sessions, tokens } from "./sessions.js";

export type { IntentRow } from "./rows.js";
export type { PairingRow } from "./people.js";

/** One factory per concern; each concern's interface is what its factory returns. */
const CONCERNS = { repos, intents, claims, journal, tokens, sessions, pairings, consoleAuth, reads };
type Concerns = typeof CONCERNS;

/** Every query, one interface per concern, over one connection or one transaction. */
export type Tx = { [K in keyof Concerns]: ReturnType<Concerns[K]> };
export type Repo = NonNullable<Awaited<ReturnType<Tx["repos"]["byName"]>>>;

/** The store: its concerns run outside a transaction (one statement each), and `tx` runs them as one. */
export interface Store extends Tx {
  provider: Provider;
  /** Runs `fn` as one transaction. Every operation that writes is one. */
  tx<T>(fn: (t: Tx) => Promise<T>): Promise<T>;
}

/**
 * The seam for the hot path: each concern is built by one factory, so a
 * cached or prepared implementation of a concern (token and session reads,
 * coalesced lease renewals) replaces its factory, or wraps one method of
 * it, without touching the operations.
 */
export function createStore(db: Db, overrides: Partial<{ [K in keyof Concerns]: (c: PrismaTx) => Tx[K] }> = {}): Store {
  const factories = { ...CONCERNS, ...overrides };
  const bind = (c: PrismaTx) => Object.fromEntries(Object.entries(factories).map(([k, make]) => [k, make(c)])) as Tx;
  return { ...bind(db.prisma), provider: db.provider, tx: (fn) => db.tx((c) => fn(bind(c))) };
}

/** Applies pending migrations, then opens the database and its store: what `cohent serve` and every admin command do first. */
export async function openStore(url: string): Promise<{ db: Db; store: Store; applied: string[] }> {
  const applied = await migrate(url);
  const db = await openDb(url);
  return { db, store: createStore(db), applied };
}
