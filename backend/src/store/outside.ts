import type { Control } from "@cohent/protocol";
import { inListSql, listParam, type Exec } from "./fast.js";
import { list } from "./rows.js";

/**
 * The hot path's reads outside any transaction, as prepared statements on
 * the read connection (store/db `read`): SQLite's side connection, which
 * sees what is committed and never waits for the server connection's turn
 * (so a read never queues behind a transaction), and PostgreSQL's pool.
 * Under 200 agents with long-polls open, each write wakes every waiter, and
 * each waiter asks these; as Prisma calls they cost ~0.5 ms of query
 * compilation each and, on SQLite, a turn of the one connection.
 * Same rows as the Prisma queries they stand for (store/intents, journal,
 * sessions, notices), same column encodings (store/fast).
 */
const date = (v: unknown) => new Date(v as string | Date);

const sessionColumns = (p: string) =>
  [
    "id",
    "repoId",
    "tokenId",
    "key",
    "client",
    "model",
    "control",
    "controlReason",
    "epoch",
    "createdAt",
    "lastSeenAt",
    "host",
    "hostVersion",
    "wiring",
    "guardSeenAt",
    "hostReportedAt",
    "checkout",
  ]
    .map((c) => `${p}"${c}"`)
    .join(", ");
const SESSION_COLUMNS = sessionColumns("s.");
const toSession = (r: Record<string, unknown>) => ({
  id: r.id as string,
  repoId: r.repoId as string,
  tokenId: r.tokenId as string,
  key: r.key as string,
  client: r.client as string | null,
  model: r.model as string | null,
  control: r.control as Control,
  controlReason: r.controlReason as string | null,
  epoch: Number(r.epoch),
  createdAt: date(r.createdAt),
  lastSeenAt: date(r.lastSeenAt),
  host: r.host as string | null,
  hostVersion: r.hostVersion as string | null,
  wiring: r.wiring as string | null,
  guardSeenAt: r.guardSeenAt === null ? null : date(r.guardSeenAt),
  hostReportedAt: r.hostReportedAt === null ? null : date(r.hostReportedAt),
  checkout: r.checkout as string | null,
});

export function outsideStatements(x: Exec) {
  const { dialect } = x;
  return {
    owner: async (id: string) => {
      const r = await x.get(`SELECT "repoId", "sessionId" FROM "Intent" WHERE "id" = ?`, id);
      return r ? { repoId: r.repoId as string, sessionId: r.sessionId as string } : null;
    },
    /** The peers the intent's last decision named, and the oldest last call among their unfinished intents' sessions. */
    namedPeers: async (intentId: string, repoId: string) => {
      const last = await x.get(
        `SELECT "peerIds" FROM "Decision" WHERE "intentId" = ? AND "repoId" = ? ORDER BY "createdAt" DESC LIMIT 1`,
        intentId,
        repoId,
      );
      const named = list(last?.peerIds as string | undefined);
      if (!named.length) return { named, oldestSeen: null };
      const seen = await x.get(
        `SELECT MIN(s."lastSeenAt") AS "at" FROM "Session" s WHERE s."id" IN
          (SELECT i."sessionId" FROM "Intent" i WHERE ${inListSql(dialect, `i."id"`)} AND i."state" <> 'completed')`,
        listParam(dialect, named),
      );
      return { named, oldestSeen: seen?.at ? date(seen.at) : null };
    },
    tailAfter: async (repoId: string, after: number, take: number) =>
      (
        await x.all(
          `SELECT "seq", "intentId", "kind", "peerIds", "summary" FROM "Event" WHERE "repoId" = ? AND "seq" > ? ORDER BY "seq" ASC LIMIT ?`,
          repoId,
          after,
          take,
        )
      ).map((e) => ({
        seq: Number(e.seq),
        intentId: e.intentId as string,
        kind: e.kind as string,
        peerIds: list(e.peerIds as string),
        summary: e.summary as string,
      })),
    /** A session's untold notices, counted by intent (store/notices `untold`). */
    untold: async (sessionId: string): Promise<ReadonlyMap<string, number>> =>
      new Map(
        (
          await x.all(
            `SELECT "intentId", COUNT(*) AS "n" FROM "Notice" WHERE "sessionId" = ? AND "toldAt" IS NULL GROUP BY "intentId"`,
            sessionId,
          )
        ).map((r) => [r.intentId as string, Number(r.n)]),
      ),
    /** A lease renewal: one statement, committed on its own (null: no such session yet). */
    renew: async (tokenId: string, key: string, at: Date) => {
      const r = await x.get(
        `UPDATE "Session" SET "lastSeenAt" = ? WHERE "tokenId" = ? AND "key" = ? RETURNING ${sessionColumns("")}`,
        x.time(at),
        tokenId,
        key,
      );
      return r ? toSession(r) : null;
    },
    /** An agent token by the hash of its secret, with its repository (store/sessions `tokens.byHash`). */
    token: async (tokenHash: string) => {
      const r = await x.get(
        `SELECT t."id", t."repoId", t."person", t."client", t."tokenHash", t."createdAt", t."lastUsedAt", t."revokedAt",
          r."name" AS "rName", r."goal" AS "rGoal", r."caseInsensitive" AS "rCaseInsensitive", r."claimVersion" AS "rClaimVersion", r."createdAt" AS "rCreatedAt"
          FROM "AgentToken" t JOIN "Repository" r ON r."id" = t."repoId" WHERE t."tokenHash" = ?`,
        tokenHash,
      );
      if (!r) return null;
      return {
        id: r.id as string,
        repoId: r.repoId as string,
        person: r.person as string,
        client: r.client as string | null,
        tokenHash: r.tokenHash as string,
        createdAt: date(r.createdAt),
        lastUsedAt: r.lastUsedAt === null ? null : date(r.lastUsedAt),
        revokedAt: r.revokedAt === null ? null : date(r.revokedAt),
        repo: {
          id: r.repoId as string,
          name: r.rName as string,
          goal: r.rGoal as string,
          caseInsensitive: Boolean(r.rCaseInsensitive), // SQLite stores 0 or 1
          claimVersion: Number(r.rClaimVersion),
          createdAt: date(r.rCreatedAt),
        },
      };
    },
    session: async (tokenId: string, key: string) => {
      const r = await x.get(
        `SELECT ${SESSION_COLUMNS} FROM "Session" s WHERE s."tokenId" = ? AND s."key" = ?`,
        tokenId,
        key,
      );
      return r ? toSession(r) : null;
    },
    sessionById: async (id: string) => {
      const r = await x.get(
        `SELECT ${SESSION_COLUMNS}, r."name" AS "repoName" FROM "Session" s JOIN "Repository" r ON r."id" = s."repoId" WHERE s."id" = ?`,
        id,
      );
      return r ? { ...toSession(r), repoName: r.repoName as string } : null;
    },
  };
}
export type OutsideStatements = ReturnType<typeof outsideStatements>;
