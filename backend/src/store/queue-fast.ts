import type Database from "better-sqlite3";
import type { Db, PrismaTx } from "./db.js";
import type { Overrides } from "./index.js";
import { queue } from "./queue.js";
import { releaseAsks } from "./release-asks.js";

/**
 * The claim queue's checks that every claim runs (is anyone queued, leave
 * the queue, release requests made of me, untold notices of my packet),
 * as prepared statements on SQLite inside a transaction, on the connection
 * Prisma's transaction holds (as store/sqlite-fast does): microseconds where
 * a Prisma call costs half a millisecond. They answer the common case,
 * nothing there; anything else goes through Prisma as before.
 */
function statements(conn: Database.Database) {
  const cache = new Map<string, Database.Statement>();
  const st = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = conn.prepare(sql).safeIntegers(false)));
    return s;
  };
  return {
    anyWaiter: (repoId: string) => !!st(`SELECT 1 FROM "ClaimWait" WHERE "repoId" = ? LIMIT 1`).get(repoId),
    leave: (intentId: string) => st(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`).run(intentId).changes > 0,
    anyAskTo: (intentId: string) =>
      !!st(`SELECT 1 FROM "ReleaseAsk" WHERE "toIntentId" = ? AND "closedAt" IS NULL LIMIT 1`).get(intentId),
    anyUntold: (intentId: string) =>
      !!st(`SELECT 1 FROM "Notice" WHERE "intentId" = ? AND "toldAt" IS NULL LIMIT 1`).get(intentId),
  };
}
export type QueueStatements = ReturnType<typeof statements>;

/** The statements for a handle: inside a transaction on SQLite, else null (Prisma answers). */
export function queueStatements(db: Db): (c: PrismaTx) => QueueStatements | null {
  const prepared = new WeakMap<object, QueueStatements>();
  return (c) => {
    const conn = db.provider === "sqlite" && c !== (db.prisma as unknown) ? db.connection() : null;
    if (!conn) return null;
    let s = prepared.get(conn);
    if (!s) prepared.set(conn, (s = statements(conn)));
    return s;
  };
}

export function queueOverrides(db: Db): Overrides {
  const fast = queueStatements(db);
  return {
    queue: (c: PrismaTx) => {
      const base = queue(c);
      const s = fast(c);
      if (!s) return base;
      return {
        ...base,
        any: async (repoId: string) => s.anyWaiter(repoId),
        leave: async (intentId: string) => s.leave(intentId),
      };
    },
    releaseAsks: (c: PrismaTx) => {
      const base = releaseAsks(c);
      const s = fast(c);
      if (!s) return base;
      return { ...base, openTo: async (id: string) => (s.anyAskTo(id) ? base.openTo(id) : []) };
    },
  };
}
