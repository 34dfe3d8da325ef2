import type { Queue, QueueParty } from "./contract.js";
import type { Handle } from "./handle.js";
import { json, list, recordOf } from "./rows.js";
import { inListSql, listParam, type Exec, type Row } from "./sql/exec.js";
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

const wait = (r: Row) => {
  const w = T.ClaimWait.decode(r);
  return { id: w.id, intentId: w.intentId, paths: list(w.paths), createdAt: w.createdAt };
};
const partiesOf = async (x: Exec, ids: string[]) =>
  new Map(
    (ids.length
      ? await x.all(
          `SELECT i."id", ${PARTY} FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" WHERE ${inListSql(x.dialect, `i."id"`)}`,
          listParam(x.dialect, [...new Set(ids)]),
        )
      : []
    ).map((r) => [r.id as string, toHolder(r.id as string, r)]),
  );

/**
 * The claim queue (ClaimWait): at most one waiting claim per intent, in (createdAt, id) order. A class,
 * its methods built once (store/intents IntentStore).
 */
class QueueStore implements Queue {
  private readonly h: Handle;
  constructor(h: Handle) {
    this.h = h;
  }

  /** True when the repository has any waiter: the cheap check before a grant walk. */
  async any(repoId: string) {
    return !!(await this.h.x.get(`SELECT 1 FROM "ClaimWait" WHERE "repoId" = ? LIMIT 1`, repoId));
  }

  /** The repository's queue in order, each waiter with its identity and its session's lease. */
  async list(repoId: string) {
    return (
      await this.h.x.all(
        `SELECT ${T.ClaimWait.cols("w")}, ${PARTY} FROM "ClaimWait" w ${PARTY_FROM} WHERE w."repoId" = ? ORDER BY w."createdAt" ASC, w."id" ASC`,
        repoId,
      )
    ).map((r) => ({ ...wait(r), party: toHolder(r.intentId as string, r) }));
  }

  async of(intentId: string) {
    const r = await this.h.x.get(
      `SELECT ${T.ClaimWait.cols()} FROM "ClaimWait" WHERE "intentId" = ?`,
      intentId,
    );
    return r ? wait(r) : null;
  }

  /** The time of the queue's last entry: a new entry goes strictly after it. */
  async tailAt(repoId: string) {
    const r = await this.h.x.get(
      `SELECT "createdAt" FROM "ClaimWait" WHERE "repoId" = ? ORDER BY "createdAt" DESC, "id" DESC LIMIT 1`,
      repoId,
    );
    return r ? new Date(r.createdAt as string) : null;
  }

  /** Writes the intent's single entry (replacing any): a new entry takes the tail. */
  async put(w: { id: string; repoId: string; intentId: string; paths: string[]; at: Date }) {
    const { x } = this.h;
    await x.later(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, [w.intentId]);
    await insert(x, T.ClaimWait, {
      id: w.id,
      repoId: w.repoId,
      intentId: w.intentId,
      paths: json(w.paths),
      createdAt: w.at,
    });
  }

  /** Removes the intent's entry; its paths, or null when it had none. */
  async remove(intentId: string): Promise<string[] | null> {
    const { x } = this.h;
    const r = await x.get(`SELECT "paths" FROM "ClaimWait" WHERE "intentId" = ?`, intentId);
    if (!r) return null;
    await x.later(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, [intentId]);
    return list(r.paths as string);
  }

  /** Takes the intent out of the queue, if it was in it (one statement: every successful claim runs it). */
  async leave(intentId: string) {
    return (await this.h.x.run(`DELETE FROM "ClaimWait" WHERE "intentId" = ?`, intentId)) > 0;
  }

  /** Waiters whose session's lease expired. */
  async expired(repoId: string, cutoff: Date) {
    const { x } = this.h;
    return (
      await x.all(
        `SELECT w."intentId" FROM "ClaimWait" w JOIN "Intent" i ON i."id" = w."intentId" JOIN "Session" s ON s."id" = i."sessionId" WHERE w."repoId" = ? AND s."lastSeenAt" < ?`,
        repoId,
        x.time(cutoff),
      )
    ).map((r) => r.intentId as string);
  }

  /** Every live claim of the repository with its holder, oldest first: the Scopes view and the queue's notices. */
  async holders(repoId: string) {
    return (
      await this.h.x.all(
        `SELECT w."intentId", w."paths", w."updatedAt", ${PARTY} FROM "Claim" w ${PARTY_FROM} WHERE w."repoId" = ? ORDER BY w."updatedAt" ASC, w."intentId" ASC`,
        repoId,
      )
    ).map((r) => ({
      ...toHolder(r.intentId as string, r),
      paths: list(r.paths as string),
      since: new Date(r.updatedAt as string),
    }));
  }

  /** Several intents' identities, by id. */
  parties(ids: string[]) {
    return partiesOf(this.h.x, ids);
  }

  /** One intent's identity, for a notice's peer or a view. */
  async party(intentId: string) {
    return (await partiesOf(this.h.x, [intentId])).get(intentId) ?? null;
  }
}

export const queue = (h: Handle): Queue => new QueueStore(h);
