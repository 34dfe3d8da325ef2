import { batcher } from "./batch.js";
import { encodeHint, CHANNEL, type ChangeKind, type Changes } from "./changes.js";
import { claims } from "./claims.js";
import { openDb, type Db, type OpenOptions, type PrismaTx, type Provider } from "./db.js";
import type { Raw } from "./shell.js";
import { hotOverrides } from "./hot.js";
import { intents } from "./intents.js";
import { journal } from "./journal.js";
import { migrate } from "./migrate.js";
import { noticeOverrides, notices } from "./notices.js";
import { consoleAuth, pairings } from "./people.js";
import { queue } from "./queue.js";
import { queueOverrides } from "./queue-fast.js";
import { reads } from "./reads.js";
import { releaseAsks } from "./release-asks.js";
import { repos } from "./repos.js";
import { sessions, tokens } from "./sessions.js";
import { wiring } from "./wiring.js";

export type { IntentRow } from "./rows.js";
export type { PairingRow } from "./people.js";
export type { Changes, ChangeKind } from "./changes.js";

/** What a write tells the change notification: it touched this repository's change log or its control state. */
export type Touch = (repoId: string, kind: ChangeKind) => void;

/** One factory per concern; each concern's interface is what its factory returns. */
const CONCERNS = {
  repos,
  intents,
  claims,
  journal,
  tokens,
  sessions,
  pairings,
  consoleAuth,
  reads,
  queue,
  notices,
  releaseAsks,
  wiring,
};
type Concerns = typeof CONCERNS;

/** Every query, one interface per concern, over one connection or one transaction. */
export type Tx = { [K in keyof Concerns]: ReturnType<Concerns[K]> };
export type Repo = NonNullable<Awaited<ReturnType<Tx["repos"]["byName"]>>>;
export type Overrides = Partial<{ [K in keyof Concerns]: (c: PrismaTx, touch: Touch) => Tx[K] }>;

/** The store: its concerns run outside a transaction (one statement each), and `tx` runs them as one. */
export interface Store extends Tx {
  provider: Provider;
  /** Change hints and the high-water cursor of each repository. */
  changes: Changes;
  /**
   * Runs `fn` as one transaction. Every operation that writes is one. With
   * `batch` (a repository's id), it may share its transaction with other
   * writes to that repository, in a savepoint of its own (store/batch).
   */
  tx<T>(fn: (t: Tx) => Promise<T>, opts?: { batch?: string }): Promise<T>;
  /** One round trip to the database, for readiness: throws when it cannot be reached. */
  ping(): Promise<void>;
}

/**
 * The seam for the hot path: each concern is built by one factory, so a
 * cached or prepared implementation of a concern (token and session reads,
 * coalesced lease renewals) replaces its factory, or wraps one method of
 * it, without touching the operations.
 *
 * Every write reports what it touched; after the transaction commits the
 * store tells `changes` (and, on PostgreSQL, the transaction itself sends one
 * NOTIFY per repository, delivered at its commit, to the other instances).
 */
export function createStore(db: Db, overrides: Overrides = {}): Store {
  const factories = {
    ...CONCERNS,
    ...hotOverrides(db),
    ...queueOverrides(),
    ...noticeOverrides(db),
    ...overrides,
  } as Record<string, (c: PrismaTx, touch: Touch) => unknown>;
  /**
   * The concerns on one handle (the store's own, outside any transaction, or a transaction's), each
   * built on its first use: a write uses three or four of the twelve, and building them all (a few
   * hundred closures) cost more than an empty transaction.
   */
  class Bound {
    readonly built: Record<string, unknown> = {};
    constructor(
      readonly c: PrismaTx,
      readonly touch: Touch,
    ) {}
  }
  for (const [k, make] of Object.entries(factories))
    Object.defineProperty(Bound.prototype, k, {
      get(this: Bound) {
        return (this.built[k] ??= make(this.c, this.touch));
      },
    });
  /** One NOTIFY per transaction, with every hint its work (every member of a batch) collected. */
  const notify = async (raw: Raw) => {
    if (!raw.pg || !raw.hints?.size) return;
    await raw.pg.query({
      name: "cohent_notify",
      text: `SELECT pg_notify('${CHANNEL}', h) FROM unnest($1::text[]) AS h`,
      values: [[...raw.hints]],
    });
    raw.hints.clear();
  };
  const batches = batcher(db, notify);
  // Outside a transaction each statement commits on its own.
  const direct: Touch = (repoId, kind) => db.changes.committed(repoId, [kind]);
  const store: Omit<Store, keyof Tx> = {
    provider: db.provider,
    changes: db.changes,
    ping: async () => {
      await db.prisma.$queryRawUnsafe("SELECT 1");
    },
    tx: async (fn, opts) => {
      const touched = new Map<string, Set<ChangeKind>>();
      const touch: Touch = (repoId, kind) => {
        const kinds = touched.get(repoId) ?? new Set();
        touched.set(repoId, kinds.add(kind));
      };
      const body = async (c: PrismaTx, raw: Raw) => {
        const out = await fn(new Bound(c, touch) as unknown as Tx);
        // PostgreSQL: the hints go out at commit, to the other instances (a rolled-back savepoint's never do).
        if (raw.pg)
          for (const [repoId, kinds] of touched) (raw.hints ??= new Set()).add(encodeHint(repoId, kinds));
        return out;
      };
      const result = opts?.batch
        ? await batches.run(opts.batch, body)
        : await db.tx(async (c, raw) => {
            const out = await body(c, raw);
            await notify(raw);
            return out;
          });
      for (const [repoId, kinds] of touched) db.changes.committed(repoId, kinds);
      return result;
    },
  };
  return Object.assign(new Bound(db.prisma, direct), store) as unknown as Store;
}

/** Applies pending migrations, then opens the database and its store: what `cohent serve` and every admin command do first. */
export async function openStore(
  url: string,
  opts: OpenOptions = {},
): Promise<{ db: Db; store: Store; applied: string[] }> {
  const applied = await migrate(url);
  const db = await openDb(url, opts);
  return { db, store: createStore(db), applied };
}
