import type { Pruned, Retention } from "./contract.js";
import type { Handle } from "./handle.js";
import type { Exec } from "./sql/exec.js";

/** The tables the retention rule prunes (store/contract-upkeep), in the order a pass takes them. */
export const PRUNED: readonly Pruned[] = ["decisions", "notices", "packets", "catches"];

/** An intent still open: its latest decision and its untold notices are its current state, kept whatever their age. */
const OPEN = (col: string) =>
  `EXISTS (SELECT 1 FROM "Intent" i WHERE i."id" = ${col} AND i."closedAt" IS NULL)`;

const WHICH: Record<Pruned, { table: string; keep: string }> = {
  decisions: { table: "Decision", keep: `NOT ${OPEN(`"Decision"."intentId"`)}` },
  notices: { table: "Notice", keep: `("toldAt" IS NOT NULL OR NOT ${OPEN(`"Notice"."intentId"`)})` },
  packets: { table: "Packet", keep: "1 = 1" },
  catches: { table: "GuardCatch", keep: "1 = 1" },
};

/**
 * The retention rule's deletes: a batch at a time, each one statement (its own transaction outside
 * one), so that a month's backlog never holds the write lock for long. The oldest go first, found
 * through the table's createdAt index.
 */
export const retention = (h: Handle): Retention => ({
  prune: async (table, before, take) => {
    const { table: t, keep } = WHICH[table];
    const drop = (e: Exec) =>
      e.run(
        `DELETE FROM "${t}" WHERE "id" IN (SELECT "id" FROM "${t}" WHERE "createdAt" < ? AND ${keep} ORDER BY "createdAt" ASC LIMIT ?)`,
        e.time(before),
        take,
      );
    return h.tx ? drop(h.x) : h.write(drop);
  },
});
