import type { PrismaTx } from "./db.js";
import { onConnection, type Exec } from "./fast.js";
import type { Overrides } from "./index.js";
import { queue } from "./queue.js";
import { releaseAsks } from "./release-asks.js";

/**
 * The claim queue's checks that every claim runs (is anyone queued, leave
 * the queue, release requests made of me, untold notices of my packet), as
 * prepared statements on the store transaction's own connection (store/fast):
 * microseconds (SQLite) or one round trip (PostgreSQL) where a Prisma call
 * costs half a millisecond. They answer the common case, nothing there;
 * anything else goes through the transaction's Prisma handle as before.
 */
function statements(x: Exec) {
  return {
    anyWaiter: async (repoId: string) =>
      !!(await x.get(`SELECT 1 FROM "ClaimWait" WHERE "repoId" = ? LIMIT 1`, repoId)),
    leave: async (intentId: string) =>
      (await x.run(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, intentId)) > 0,
    anyAskTo: async (intentId: string) =>
      !!(await x.get(
        `SELECT 1 FROM "ReleaseAsk" WHERE "toIntentId" = ? AND "closedAt" IS NULL LIMIT 1`,
        intentId,
      )),
    anyUntold: async (intentId: string) =>
      !!(await x.get(`SELECT 1 FROM "Notice" WHERE "intentId" = ? AND "toldAt" IS NULL LIMIT 1`, intentId)),
  };
}
export type QueueStatements = ReturnType<typeof statements>;

/** The statements for a handle: inside a store transaction, on its connection; else null (Prisma answers). */
export const queueStatements = () => onConnection(statements);

export function queueOverrides(): Overrides {
  const fast = queueStatements();
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
      return { ...base, openTo: async (id: string) => ((await s.anyAskTo(id)) ? base.openTo(id) : []) };
    },
  };
}
