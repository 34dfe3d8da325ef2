import { GuardRuleName, OVERLAP_ACTIONS, ShellWriteDetail, type CommandKind } from "@cohent/protocol";
import { METRIC_NOTICE_KINDS, QUEUE_EVENT_KINDS, type MetricRows } from "../core/metrics.js";
import type { RecapRow } from "../core/recap.js";
import type { Reads } from "./contract.js";
import type { Handle } from "./handle.js";
import { commitOf, list, recordOf, toCommit, toDecision } from "./rows.js";
import { inListSql, listParam, type Row } from "./sql/exec.js";
import { T } from "./sql/tables.js";

const dateOf = (v: unknown): Date => (v instanceof Date ? v : new Date(v as string));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : dateOf(v));
const ms = (v: unknown) => dateOrNull(v)?.getTime() ?? 0;

/** A shell-write catch as read back; its detail null when it does not parse. */
function shellWriteOf(r: Row) {
  const g = T.GuardCatch.decode(r);
  const detail = g.detail ? ShellWriteDetail.safeParse(JSON.parse(g.detail)) : null;
  return {
    id: g.id,
    intentId: g.intentId,
    agentId: g.agentId,
    paths: list(g.paths),
    peerIds: list(g.peerIds),
    detail: detail?.success ? detail.data : null,
    at: g.createdAt,
  };
}

/** The rule a refusal's detail names ({ rule }), or null: none, or not a rule's name. */
function ruleOf(detail: unknown): string | null {
  if (typeof detail !== "string") return null;
  try {
    const r = GuardRuleName.safeParse((JSON.parse(detail) as { rule?: unknown } | null)?.rule);
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The read models of the console, the admin CLI and the recap: queries no agent call runs. */
export const reads = ({ x }: Handle): Reads => {
  const inList = (column: string) => inListSql(x.dialect, column);
  const listArg = (v: readonly string[]) => listParam(x.dialect, [...v]);
  const count = async (sql: string, ...args: unknown[]) => Number((await x.get(sql, ...args))?.n ?? 0);
  return {
    /** The rows every metric is computed from, optionally since an instant. */
    metricRows: async (repoId: string, since?: Date): Promise<MetricRows> => {
      const where = `"repoId" = ?${since ? ` AND "createdAt" >= ?` : ""}`;
      const args = [repoId, ...(since ? [x.time(since)] : [])];
      const of = (sql: string, ...more: unknown[]) => x.all(sql, ...args, ...more);
      const [decisions, catches, packets, commands, events, notices, asks] = await Promise.all([
        of(`SELECT "createdAt", "action" FROM "Decision" WHERE ${where}`),
        of(`SELECT "createdAt", "kind" FROM "GuardCatch" WHERE ${where}`),
        of(`SELECT "createdAt", "tokens", "ackedChars" FROM "Packet" WHERE ${where}`),
        of(`SELECT "createdAt" FROM "Command" WHERE ${where}`),
        of(
          `SELECT "createdAt", "kind" FROM "Event" WHERE ${where} AND ${inList(`"kind"`)}`,
          listArg(QUEUE_EVENT_KINDS),
        ),
        of(
          `SELECT "createdAt", "kind", "waitedMs" FROM "Notice" WHERE ${where} AND ${inList(`"kind"`)}`,
          listArg(METRIC_NOTICE_KINDS),
        ),
        of(`SELECT "createdAt", "honouredAt" FROM "ReleaseAsk" WHERE ${where}`),
      ]);
      const at = (r: Row) => dateOf(r.createdAt);
      return {
        decisions: decisions.map((r) => ({ createdAt: at(r), action: r.action as string })),
        catches: catches.map((r) => ({ createdAt: at(r), kind: r.kind as string })),
        packets: packets.map((r) => ({
          createdAt: at(r),
          tokens: Number(r.tokens),
          ackedChars: r.ackedChars === null ? null : Number(r.ackedChars),
        })),
        commands: commands.map((r) => ({ createdAt: at(r) })),
        events: events.map((r) => ({ createdAt: at(r), kind: r.kind as string })),
        notices: notices.map((r) => ({
          createdAt: at(r),
          kind: r.kind as string,
          waitedMs: r.waitedMs === null ? null : Number(r.waitedMs),
        })),
        asks: asks.map((r) => ({ createdAt: at(r), honouredAt: dateOrNull(r.honouredAt) })),
      };
    },
    /** A fingerprint of everything the console shows: the change log and what changes outside it. */
    fingerprint: async () => {
      const [event, pairing, tokens, seen, repos, catches, wiring] = await Promise.all([
        x.get(`SELECT MAX("seq") AS "seq" FROM "Event"`),
        x.get(`SELECT COUNT(*) AS "n", MAX("updatedAt") AS "at" FROM "Pairing"`),
        x.get(`SELECT COUNT(*) AS "n", COUNT("revokedAt") AS "revoked" FROM "AgentToken"`),
        // A session's host report (or its first guarded call) writes no event either.
        x.get(`SELECT MAX("lastSeenAt") AS "seen", MAX("hostReportedAt") AS "host" FROM "Session"`),
        x.get(`SELECT COUNT(*) AS "n", MAX("createdAt") AS "at" FROM "Repository"`),
        // A refused claim writes no event, and lease renewals are coalesced: count the catches themselves.
        x.get(`SELECT COUNT(*) AS "n" FROM "GuardCatch"`),
        // A wiring report writes no event either; clearing one changes only its clearedAt.
        x.get(
          `SELECT COUNT("clearedAt") AS "n", MAX("reportedAt") AS "reported", MAX("clearedAt") AS "cleared" FROM "WiringReport"`,
        ),
      ]);
      return [
        Number(event?.seq ?? 0),
        Number(pairing?.n ?? 0),
        ms(pairing?.at),
        Number(tokens?.n ?? 0),
        Number(tokens?.revoked ?? 0),
        ms(seen?.seen),
        ms(seen?.host),
        Number(repos?.n ?? 0),
        Number(catches?.n ?? 0),
        Number(wiring?.n ?? 0),
        ms(wiring?.reported),
        ms(wiring?.cleared),
      ].join(":");
    },
    repoSummary: async (repoId: string) => {
      const [openIntents, activeTokens, people, lastEvent] = await Promise.all([
        count(`SELECT COUNT(*) AS "n" FROM "Intent" WHERE "repoId" = ? AND "closedAt" IS NULL`, repoId),
        count(`SELECT COUNT(*) AS "n" FROM "AgentToken" WHERE "repoId" = ? AND "revokedAt" IS NULL`, repoId),
        x.all(
          `SELECT "person" FROM "AgentToken" WHERE "repoId" = ? AND "revokedAt" IS NULL GROUP BY "person" ORDER BY MIN("createdAt") ASC`,
          repoId,
        ),
        x.get(`SELECT "createdAt" FROM "Event" WHERE "repoId" = ? ORDER BY "seq" DESC LIMIT 1`, repoId),
      ]);
      return {
        openIntents,
        activeTokens,
        people: people.map((r) => r.person as string),
        lastActivityAt: dateOrNull(lastEvent?.createdAt),
      };
    },
    scopeCatches: async (repoId: string, since: Date) =>
      (
        await x.all(
          `SELECT ${T.GuardCatch.cols()} FROM "GuardCatch" WHERE "repoId" = ? AND "kind" = 'scope-conflict' AND "createdAt" >= ? ORDER BY "createdAt" DESC LIMIT 100`,
          repoId,
          x.time(since),
        )
      ).map((r) => {
        const g = T.GuardCatch.decode(r);
        return {
          intentId: g.intentId,
          agentId: g.agentId,
          kind: g.kind,
          paths: list(g.paths),
          peerIds: list(g.peerIds),
          at: g.createdAt,
        };
      }),
    /** Every refusal made for a sub-agent, newest first: the live page names the sub-agents of each intent. */
    subagentCatches: async (repoId: string, since: Date) =>
      (
        await x.all(
          `SELECT "intentId", "agentId", "kind", "createdAt" FROM "GuardCatch" WHERE "repoId" = ? AND "agentId" IS NOT NULL AND "createdAt" >= ? ORDER BY "createdAt" DESC LIMIT 200`,
          repoId,
          x.time(since),
        )
      ).map((g) => ({
        intentId: g.intentId as string,
        agentId: g.agentId as string,
        kind: g.kind as string,
        at: dateOf(g.createdAt),
      })),
    refusalCounts: async (repoId: string, since: Date) =>
      (
        await x.all(
          `SELECT "kind", "detail", COUNT(*) AS "n" FROM "GuardCatch" WHERE "repoId" = ? AND "createdAt" >= ? AND "kind" NOT IN ('shell-write', 'guard-files') GROUP BY "kind", "detail"`,
          repoId,
          x.time(since),
        )
      ).map((r) => ({ kind: r.kind as string, rule: ruleOf(r.detail), count: Number(r.n) })),
    shellWrites: async (repoId: string, since: Date, take: number) =>
      (
        await x.all(
          `SELECT ${T.GuardCatch.cols()} FROM "GuardCatch" WHERE "repoId" = ? AND "kind" = 'shell-write' AND "createdAt" >= ? ORDER BY "createdAt" DESC, "id" DESC LIMIT ?`,
          repoId,
          x.time(since),
          take,
        )
      ).map((r) => shellWriteOf(r)),
    shellWrite: async (id: string) => {
      const r = await x.get(`SELECT ${T.GuardCatch.cols()} FROM "GuardCatch" WHERE "id" = ?`, id);
      return r && r.kind === "shell-write" ? { ...shellWriteOf(r), repoId: r.repoId as string } : null;
    },
    overlapDecisions: async (repoId: string, take: number) =>
      (
        await x.all(
          `SELECT ${T.Decision.cols()} FROM "Decision" WHERE "repoId" = ? AND ${inList(`"action"`)} ORDER BY "createdAt" DESC LIMIT ?`,
          repoId,
          listArg([...OVERLAP_ACTIONS]),
          take,
        )
      ).map((r) => toDecision(T.Decision.decode(r))),
    commands: async (repoId: string, take: number) =>
      (
        await x.all(
          `SELECT ${T.Command.cols("c")}, s."client" AS "sClient", t."person" AS "tPerson" FROM "Command" c JOIN "Session" s ON s."id" = c."sessionId" JOIN "AgentToken" t ON t."id" = s."tokenId" WHERE c."repoId" = ? ORDER BY c."createdAt" DESC LIMIT ?`,
          repoId,
          take,
        )
      ).map((r) => {
        const c = T.Command.decode(r);
        return {
          id: c.id,
          kind: c.kind as CommandKind,
          actor: c.actor,
          reason: c.reason,
          at: c.createdAt,
          sessionId: c.sessionId,
          person: r.tPerson as string,
          client: r.sClient as string | null,
        };
      }),
    tokens: async (repoId: string) => {
      const rows = await x.all(
        `SELECT ${T.AgentToken.cols("t")}, (SELECT MAX(s."lastSeenAt") FROM "Session" s WHERE s."tokenId" = t."id") AS "lastCallAt" FROM "AgentToken" t WHERE t."repoId" = ? ORDER BY t."createdAt" DESC`,
        repoId,
      );
      const ids = rows.map((r) => r.id as string);
      const issued = ids.length
        ? await x.all(
            `SELECT "tokenId", "machine", "approvedBy" FROM "Pairing" WHERE ${inList(`"tokenId"`)}`,
            listArg(ids),
          )
        : [];
      const by = new Map(issued.map((p) => [p.tokenId as string, p]));
      return rows.map((r) => {
        const t = T.AgentToken.decode(r);
        return {
          id: t.id,
          person: t.person,
          client: t.client,
          createdAt: t.createdAt,
          revokedAt: t.revokedAt,
          lastCallAt: dateOrNull(r.lastCallAt),
          machine: (by.get(t.id)?.machine as string | undefined) ?? null,
          approvedBy: (by.get(t.id)?.approvedBy as string | null | undefined) ?? null,
        };
      });
    },
    /** Work that changed in the window, and open blocked or waiting work that did not. */
    recapIntents: async (repoId: string, since: Date): Promise<RecapRow[]> => {
      const cols = `${T.Intent.cols("i")}, c."paths" AS "claimPaths"`;
      const from = `FROM "Intent" i LEFT JOIN "Claim" c ON c."intentId" = i."id"`;
      const order = `ORDER BY i."updatedAt" ASC, i."id" ASC`;
      const [stalled, changed] = await Promise.all([
        x.all(
          `SELECT ${cols} ${from} WHERE i."repoId" = ? AND i."closedAt" IS NULL AND i."updatedAt" < ? AND (i."state" = 'blocked' OR i."lastAction" = 'wait') ${order}`,
          repoId,
          x.time(since),
        ),
        x.all(
          `SELECT ${cols} ${from} WHERE i."repoId" = ? AND (i."closedAt" IS NULL OR i."closedAt" >= ?) AND i."updatedAt" >= ? ${order}`,
          repoId,
          x.time(since),
          x.time(since),
        ),
      ]);
      const rows = [...stalled, ...changed];
      const ids = rows.map((r) => r.id as string);
      const cps = ids.length
        ? (
            await x.all(
              `SELECT ${T.Checkpoint.cols()} FROM "Checkpoint" WHERE ${inList(`"intentId"`)} ORDER BY "createdAt" ASC, "id" ASC`,
              listArg(ids),
            )
          ).map((k) => T.Checkpoint.decode(k))
        : [];
      return rows.map((row) => {
        const r = T.Intent.decode(row);
        return {
          id: r.id,
          person: r.person,
          client: r.client,
          model: r.model,
          prompt: r.prompt,
          record: recordOf(r.record),
          state: r.state,
          lastAction: r.lastAction,
          closedAt: r.closedAt,
          updatedAt: r.updatedAt,
          scope: list(row.claimPaths as string | null),
          checkpoints: cps
            .filter((k) => k.intentId === r.id)
            .map((k) => ({
              summary: k.summary,
              paths: list(k.paths),
              ...(commitOf(k.source) ? { commit: toCommit(k) } : {}),
            })),
        };
      });
    },
    commandCount: (repoId: string, since: Date) =>
      count(
        `SELECT COUNT(*) AS "n" FROM "Command" WHERE "repoId" = ? AND "createdAt" >= ?`,
        repoId,
        x.time(since),
      ),
  };
};
