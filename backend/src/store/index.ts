import { batcher } from "./batch.js";
import { encodeHint, CHANNEL, type ChangeKind } from "./changes.js";
import { claims } from "./claims.js";
import type { RepoRow, Store, Tx } from "./contract.js";
import { openDb, type Db, type OpenOptions } from "./db.js";
import type { Handle, Raw, Touch } from "./handle.js";
import { intents } from "./intents.js";
import { journal } from "./journal.js";
import { createMemory } from "./memory.js";
import { migrate } from "./migrate.js";
import { notices } from "./notices.js";
import { consoleAuth, pairings } from "./people.js";
import { queue } from "./queue.js";
import { reads } from "./reads.js";
import { releaseAsks } from "./release-asks.js";
import { repoPages } from "./repo-pages.js";
import { repos } from "./repos.js";
import { requests } from "./requests.js";
import { retention } from "./retention.js";
import { sessions, tokens } from "./sessions.js";
import type { Exec } from "./sql/exec.js";
import { wiring } from "./wiring.js";

export type * from "./contract.js";
export type { Changes, ChangeKind } from "./changes.js";
export type { Touch } from "./handle.js";

/** One factory per concern, each implementing its part of the contract (store/contract): one body per method. */
const CONCERNS: { [K in keyof Tx]: (h: Handle) => Tx[K] } = {
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
  requests,
  repoPages,
  retention,
};
export type Repo = RepoRow;

/**
 * Every write reports what it touched; after the transaction commits the
 * store tells `changes` (and, on PostgreSQL, the transaction itself sends one
 * NOTIFY per repository, delivered at its commit, to the other instances).
 */
export function createStore(db: Db): Store {
  const mem = createMemory();
  const write = <T>(fn: (x: Exec) => Promise<T>) => db.tx((x) => fn(x));
  const outside = () => {
    throw new Error("finish: only inside a transaction");
  };
  /**
   * The concerns on one handle (the store's own, outside any transaction, or a transaction's), each
   * built on its first use: a write uses three or four of the fourteen.
   */
  class Bound {
    readonly built: Record<string, unknown> = {};
    readonly h: Handle;
    constructor(x: Exec, tx: Raw | null, touch: Touch, finish: Handle["finish"] = outside) {
      this.h = { x, tx, touch, changes: db.changes, mem, write, finish };
    }
  }
  for (const [k, make] of Object.entries(CONCERNS) as [string, (h: Handle) => unknown][])
    Object.defineProperty(Bound.prototype, k, {
      get(this: Bound) {
        return (this.built[k] ??= make(this.h));
      },
    });
  /** One NOTIFY per transaction, with every hint its work (every member of a batch) collected. */
  const notify = async (x: Exec, raw: Raw) => {
    if (!raw.pg || !raw.hints?.size) return;
    // Not waited for: it shares the COMMIT's round trip (store/db pgTx).
    await x.later(`SELECT pg_notify('${CHANNEL}', h) FROM unnest(?::text[]) AS h`, [[...raw.hints]]);
    raw.hints.clear();
  };
  const batches = batcher(db, notify);
  // Outside a transaction each statement commits on its own.
  const direct: Touch = (repoId, kind) => db.changes.committed(repoId, [kind]);
  const store: Omit<Store, keyof Tx> = {
    provider: db.provider,
    changes: db.changes,
    ping: async () => {
      await db.read.get("SELECT 1");
    },
    tx: async (fn, opts) => {
      const touched = new Map<string, Set<ChangeKind>>();
      const touch: Touch = (repoId, kind) => {
        const kinds = touched.get(repoId) ?? new Set();
        touched.set(repoId, kinds.add(kind));
      };
      const finishing: Promise<unknown>[] = [];
      const finish = (p: Promise<unknown>) => {
        p.catch(() => {}); // its failure is the transaction's (settle); awaited only after a COMMIT
        finishing.push(p);
      };
      const body = async (x: Exec, raw: Raw) => {
        const out = await fn(new Bound(x, raw, touch, finish) as unknown as Tx);
        // PostgreSQL: the hints go out at commit, to the other instances (a rolled-back savepoint's never do).
        if (raw.pg)
          for (const [repoId, kinds] of touched) (raw.hints ??= new Set()).add(encodeHint(repoId, kinds));
        return out;
      };
      const result = opts?.batch
        ? await batches.run(opts.batch, body)
        : await db.tx(async (x, raw) => {
            const out = await body(x, raw);
            await notify(x, raw);
            return out;
          });
      for (const [repoId, kinds] of touched) db.changes.committed(repoId, kinds);
      await Promise.all(finishing); // answered by now: every statement's answer precedes the COMMIT's
      return result;
    },
  };
  return Object.assign(new Bound(db.read, null, direct), store) as unknown as Store;
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
