import type Database from "better-sqlite3";
import type pg from "pg";
import type { Prisma, PrismaTx } from "./db.js";

/** The store transaction's own connection: what prepared statements run on. */
export interface Raw {
  sqlite?: Database.Database;
  pg?: pg.PoolClient;
  /** Repositories whose row lock (store/journal `lock`) this transaction holds: a batch's members share it. */
  held?: Set<string>;
  /** PostgreSQL: change hints to NOTIFY once, just before this transaction commits. */
  hints?: Set<string>;
}
const RAW = Symbol("cohent.raw");

/** The open store transaction behind a handle, or null for the plain client (outside any transaction). */
export const rawOf = (c: object): Raw | null => (c as { [RAW]?: Raw })[RAW] ?? null;

/**
 * A Prisma handle for the inside of a store transaction, opened on first use:
 * the methods no prepared statement covers (store/hot) still work, and run in
 * the same transaction. `start(open)` must make the next Prisma transaction
 * join the store's (store/adapters `joining`) and then call `open`. Opening
 * costs what a Prisma transaction costs; the hot writes never open it.
 */
export function lazyPrisma(
  prisma: Prisma,
  raw: Raw,
  start: (open: () => Promise<void>) => Promise<void>,
  options: { maxWait: number; timeout: number },
) {
  let handle: Promise<PrismaTx> | null = null;
  let finish = () => {};
  let done: Promise<unknown> = Promise.resolve();
  const open = () =>
    (handle ??= (async () => {
      let got!: (tx: PrismaTx) => void;
      const ready = new Promise<PrismaTx>((r) => (got = r));
      const ended = new Promise<void>((r) => (finish = r));
      await start(async () => {
        done = prisma.$transaction(
          async (tx) => {
            got(tx);
            await ended;
          },
          { ...options, isolationLevel: "Serializable" },
        );
        await Promise.race([ready, done]);
      });
      return ready;
    })());
  const models = new Map<PropertyKey, unknown>();
  const member = (name: PropertyKey) =>
    new Proxy(function () {}, {
      // `$executeRawUnsafe(…)` and the like
      apply: (_t, _this, args: unknown[]) =>
        open().then((tx) =>
          (tx as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>)[name]!(...args),
        ),
      // `intent.findMany(…)` and the like
      get:
        (_t, op) =>
        (...args: unknown[]) =>
          open().then((tx) =>
            (tx as unknown as Record<PropertyKey, Record<PropertyKey, (...a: unknown[]) => unknown>>)[name]![
              op
            ]!(...args),
          ),
    });
  const client = new Proxy({} as PrismaTx, {
    get: (_t, name) => {
      if (name === RAW) return raw;
      if (name === "then") return undefined;
      let m = models.get(name);
      if (!m) models.set(name, (m = member(name)));
      return m;
    },
  });
  return {
    client,
    /** Ends the Prisma side (its commit is a no-op: the store commits or rolls back). */
    close: async () => {
      if (!handle) return;
      finish();
      await done.catch(() => {});
    },
  };
}
