import type { Queue, QueueParty } from "./contract.js";
import type { Handle } from "./handle.js";
import { json, list, recordOf } from "./rows.js";
import { inListSql, listParam, type Row } from "./sql/exec.js";
import { insert, T } from "./sql/tables.js";

/** Who an intent is, with its session and lease: what the queue and the Scopes view name. */
const PARTY = `i."person" AS "pPerson", i."client" AS "pClient", i."model" AS "pModel", i."record" AS "pRecord", i."sessionId" AS "pSessionId", s."lastSeenAt" AS "pLastSeenAt"`;
const PARTY_FROM = `JOIN "Intent" i ON i."id" = w."intentId" JOIN "Session" s ON s."id" = i."sessionId"`;
const toHolder = (intentId: string, r: Row): QueueParty => ({
  intentId,
  person: r.pPerson as string,
  client: r.pClient as string | null,
  model: r.pModel as string | null,
  objective: recordOf(r.pRecord as string | null)?.objective ?? null,
  sessionId: r.pSessionId as string,
  lastSeenAt: new Date(r.pLastSeenAt as string),
});
export type { QueueParty };

/** The claim queue (ClaimWait): at most one waiting claim per intent, in (createdAt, id) order. */
export const queue = ({ x }: Handle): Queue => {
  const wait = (r: Row) => {
    const w = T.ClaimWait.decode(r);
    return { id: w.id, intentId: w.intentId, paths: list(w.paths), createdAt: w.createdAt };
  };
  const parties = async (ids: string[]) =>
    new Map(
      (ids.length
        ? await x.all(
            `SELECT i."id", ${PARTY} FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" WHERE ${inListSql(x.dialect, `i."id"`)}`,
            listParam(x.dialect, [...new Set(ids)]),
          )
        : []
      ).map((r) => [r.id as string, toHolder(r.id as string, r)]),
    );
  return {
    /** True when the repository has any waiter: the cheap check before a grant walk. */
    any: async (repoId: string) =>
      !!(await x.get(`SELECT 1 FROM "ClaimWait" WHERE "repoId" = ? LIMIT 1`, repoId)),
    /** The repository's queue in order, each waiter with its identity and its session's lease. */
    list: async (repoId: string) =>
      (
        await x.all(
          `SELECT ${T.ClaimWait.cols("w")}, ${PARTY} FROM "ClaimWait" w ${PARTY_FROM} WHERE w."repoId" = ? ORDER BY w."createdAt" ASC, w."id" ASC`,
          repoId,
        )
      ).map((r) => ({ ...wait(r), party: toHolder(r.intentId as string, r) })),
    of: async (intentId: string) => {
      const r = await x.get(`SELECT ${T.ClaimWait.cols()} FROM "ClaimWait" WHERE "intentId" = ?`, intentId);
      return r ? wait(r) : null;
    },
    /** The time of the queue's last entry: a new entry goes strictly after it. */
    tailAt: async (repoId: string) => {
      const r = await x.get(
        `SELECT "createdAt" FROM "ClaimWait" WHERE "repoId" = ? ORDER BY "createdAt" DESC, "id" DESC LIMIT 1`,
        repoId,
      );
      return r ? new Date(r.createdAt as string) : null;
    },
    /** Writes the intent's single entry (replacing any): a new entry takes the tail. */
    put: async (w: { id: string; repoId: string; intentId: string; paths: string[]; at: Date }) => {
      await x.later(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, [w.intentId]);
      await insert(x, T.ClaimWait, {
        id: w.id,
        repoId: w.repoId,
        intentId: w.intentId,
        paths: json(w.paths),
        createdAt: w.at,
      });
    },
    /** Removes the intent's entry; its paths, or null when it had none. */
    remove: async (intentId: string): Promise<string[] | null> => {
      const r = await x.get(`SELECT "paths" FROM "ClaimWait" WHERE "intentId" = ?`, intentId);
      if (!r) return null;
      await x.later(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, [intentId]);
      return list(r.paths as string);
    },
    /** Takes the intent out of the queue, if it was in it (one statement: every successful claim runs it). */
    leave: async (intentId: string) =>
      (await x.run(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, intentId)) > 0,
    /** Waiters whose session's lease expired. */
    expired: async (repoId: string, cutoff: Date) =>
      (
        await x.all(
          `SELECT w."intentId" FROM "ClaimWait" w JOIN "Intent" i ON i."id" = w."intentId" JOIN "Session" s ON s."id" = i."sessionId" WHERE w."repoId" = ? AND s."lastSeenAt" < ?`,
          repoId,
          x.time(cutoff),
        )
      ).map((r) => r.intentId as string),
    /** Every live claim of the repository with its holder, oldest first: the Scopes view and the queue's notices. */
    holders: async (repoId: string) =>
      (
        await x.all(
          `SELECT w."intentId", w."paths", w."updatedAt", ${PARTY} FROM "Claim" w ${PARTY_FROM} WHERE w."repoId" = ? ORDER BY w."updatedAt" ASC, w."intentId" ASC`,
          repoId,
        )
      ).map((r) => ({
        ...toHolder(r.intentId as string, r),
        paths: list(r.paths as string),
        since: new Date(r.updatedAt as string),
      })),
    /** Several intents' identities, by id. */
    parties,
    /** One intent's identity, for a notice's peer or a view. */
    party: async (intentId: string) => (await parties([intentId])).get(intentId) ?? null,
  };
};
