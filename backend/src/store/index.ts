import { claims, type Claims } from "./claims.js";
import type { Db, PrismaTx, Provider } from "./db.js";
import { intents, type Intents } from "./intents.js";
import { journal, type Journal } from "./journal.js";
import { consoleAuth, pairings, type ConsoleAuth, type Pairings } from "./people.js";
import { reads, type Reads } from "./reads.js";
import { repos, type Repos } from "./repos.js";
import { sessions, tokens, type Sessions, type Tokens } from "./sessions.js";

export type { IntentRow, Party, EventRow, Repo, Control } from "./rows.js";
export type { SessionRow, TokenRow } from "./sessions.js";
export type { PairingRow, ConsoleSessionRow } from "./people.js";

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
}

/** The store: its concerns run outside a transaction (one statement each), and `tx` runs them as one. */
export interface Store extends Tx {
  provider: Provider;
  /** Runs `fn` as one transaction. Every operation that writes is one. */
  tx<T>(fn: (t: Tx) => Promise<T>): Promise<T>;
}

type Concerns = { [K in keyof Tx]: (c: PrismaTx) => Tx[K] };
const CONCERNS: Concerns = { repos, intents, claims, journal, tokens, sessions, pairings, consoleAuth, reads };

/**
 * The seam for the hot path: each concern is built by one factory, so a
 * cached or prepared implementation of a concern (token and session reads,
 * coalesced lease renewals) replaces its factory without touching operations.
 */
export function createStore(db: Db, overrides: Partial<Concerns> = {}): Store {
  const factories = { ...CONCERNS, ...overrides };
  const bind = (c: PrismaTx): Tx => {
    const t = {} as Record<keyof Tx, unknown>;
    for (const k of Object.keys(factories) as (keyof Tx)[]) t[k] = factories[k](c);
    return t as Tx;
  };
  return { ...bind(db.prisma), provider: db.provider, tx: (fn) => db.tx((c) => fn(bind(c))) };
}
