import type Database from "better-sqlite3";
import type { Action, Control, IntentRecord, Usage } from "@cohent/protocol";
import type { PeerClaim } from "../core/arbitrate.js";
import { indexNames, type NameLookup } from "../core/resolver-index.js";
import { commitSource, json, list, recordOf, toDecision, type IntentRow } from "./rows.js";

/**
 * Prepared statements for the writes' hottest queries on SQLite, on the very
 * connection Prisma's transaction holds (BEGIN … COMMIT is per connection),
 * so they are part of that transaction and as durable as the rest of it.
 * Each costs microseconds where a Prisma call costs ~0.5 ms of query
 * compilation. The schema and its migrations stay Prisma's; the columns and
 * encodings here are Prisma's (DateTime as ISO text with "+00:00").
 */
export const sqliteTime = (d: Date) => d.toISOString().replace("Z", "+00:00");
const date = (text: string) => new Date(text);
const dateOrNull = (text: string | null) => (text === null ? null : new Date(text));

type Row = Record<string, unknown>;

const INTENT_COLUMNS = `i."id", i."repoId", i."sessionId", i."person", i."client", i."model", i."prompt", i."promptPaths", i."record", i."state", i."lastAction",
  i."createdAt", i."updatedAt", i."closedAt", s."key" AS "sKey", s."lastSeenAt" AS "sLastSeenAt", s."control" AS "sControl", s."controlReason" AS "sControlReason",
  c."paths" AS "claimPaths",
  (SELECT json_array(k."status", k."summary", k."createdAt") FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1) AS "lastCp"`;
const INTENT_FROM = `FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" LEFT JOIN "Claim" c ON c."intentId" = i."id"`;

function toIntentRow(r: Row): IntentRow {
  const cp = r.lastCp ? (JSON.parse(r.lastCp as string) as [string, string, string]) : null;
  return {
    id: r.id as string,
    repoId: r.repoId as string,
    sessionId: r.sessionId as string,
    person: r.person as string,
    client: r.client as string | null,
    model: r.model as string | null,
    prompt: r.prompt as string,
    promptPaths: list(r.promptPaths as string),
    record: recordOf(r.record as string | null),
    state: r.state as string,
    lastAction: r.lastAction as Action,
    createdAt: date(r.createdAt as string),
    updatedAt: date(r.updatedAt as string),
    closedAt: dateOrNull(r.closedAt as string | null),
    scope: list(r.claimPaths as string | null),
    lastCheckpoint: cp ? { status: cp[0], summary: cp[1], at: date(cp[2]).toISOString() } : null,
    session: {
      key: r.sKey as string,
      lastSeenAt: date(r.sLastSeenAt as string),
      control: r.sControl as Control,
      controlReason: r.sControlReason as string | null,
    },
  };
}

export function sqliteStatements(conn: Database.Database) {
  const cache = new Map<string, Database.Statement>();
  // Prisma's connection returns integers as BigInt (defaultSafeIntegers); these statements want numbers.
  const st = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = conn.prepare(sql).safeIntegers(false)));
    return s;
  };
  const intentsWhere = (where: string, order: string) =>
    st(`SELECT ${INTENT_COLUMNS} ${INTENT_FROM} WHERE ${where} ${order}`);

  return {
    journal: {
      lockRow: (repoId: string) =>
        st(`UPDATE "Repository" SET "claimVersion" = "claimVersion" + 1 WHERE "id" = ?`).run(repoId),
      addEvent: (e: {
        repoId: string;
        intentId: string;
        kind: string;
        summary: string;
        peerIds: string[];
        at: Date;
      }) =>
        (
          st(
            `INSERT INTO "Event" ("repoId", "intentId", "kind", "peerIds", "summary", "createdAt") VALUES (?, ?, ?, ?, ?, ?) RETURNING "seq"`,
          ).get(e.repoId, e.intentId, e.kind, json(e.peerIds), e.summary.slice(0, 500), sqliteTime(e.at)) as {
            seq: number;
          }
        ).seq,
      latestSeq: (repoId: string) =>
        Number(
          (
            st(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`).get(repoId) as {
              seq: number | null;
            }
          ).seq ?? 0,
        ),
      lastDecision: (intentId: string) => {
        const r = st(`SELECT * FROM "Decision" WHERE "intentId" = ? ORDER BY "createdAt" DESC LIMIT 1`).get(
          intentId,
        ) as Row | undefined;
        return r
          ? toDecision({
              ...(r as { id: string; intentId: string; action: string; peerIds: string; reason: string }),
              createdAt: date(r.createdAt as string),
            })
          : null;
      },
      addDecision: (d: {
        id: string;
        repoId: string;
        intentId: string;
        action: Action;
        peerIds: string[];
        reason: string;
        at: Date;
      }) => {
        st(
          `INSERT INTO "Decision" ("id", "repoId", "intentId", "action", "peerIds", "reason", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(d.id, d.repoId, d.intentId, d.action, json(d.peerIds), d.reason, sqliteTime(d.at));
        return toDecision({ ...d, peerIds: json(d.peerIds), createdAt: d.at });
      },
      addPacket: (p: {
        id: string;
        repoId: string;
        intentId: string;
        sessionId: string;
        kind: string;
        action: string;
        cursor: number;
        chars: number;
        tokens: number;
        peerIds: string[];
        at: Date;
      }) => {
        st(
          `INSERT INTO "Packet" ("id", "repoId", "intentId", "sessionId", "kind", "action", "cursor", "chars", "tokens", "peerIds", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          p.id,
          p.repoId,
          p.intentId,
          p.sessionId,
          p.kind,
          p.action,
          p.cursor,
          p.chars,
          p.tokens,
          json(p.peerIds),
          sqliteTime(p.at),
        );
      },
    },
    intents: {
      head: (id: string) => {
        const r = st(
          `SELECT "id", "repoId", "sessionId", "state", "closedAt", "lastAction" FROM "Intent" WHERE "id" = ?`,
        ).get(id) as Row | undefined;
        return r
          ? {
              id: r.id as string,
              repoId: r.repoId as string,
              sessionId: r.sessionId as string,
              state: r.state as string,
              closedAt: dateOrNull(r.closedAt as string | null),
              lastAction: r.lastAction as Action,
            }
          : null;
      },
      get: (id: string) => {
        const r = intentsWhere(`i."id" = ?`, "").get(id) as Row | undefined;
        return r ? toIntentRow(r) : null;
      },
      active: (repoId: string, cutoff: Date) =>
        (
          intentsWhere(
            `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ?`,
            `ORDER BY i."createdAt" ASC, i."id" ASC`,
          ).all(repoId, sqliteTime(cutoff)) as Row[]
        ).map(toIntentRow),
      /**
       * The resolver's candidate peers through the IntentName index: active and completed, oldest first.
       * The unary `+` keeps SQLite from walking the repository's intents: it looks up the named ids.
       */
      candidates: (repoId: string, lookup: NameLookup, cutoff: Date) => {
        const of = (kind: string) => JSON.stringify(lookup.active.find((k) => k.kind === kind)?.names ?? []);
        const named = (kind: string) =>
          `SELECT "intentId" FROM "IntentName" WHERE "repoId" = ? AND "kind" = '${kind}' AND "name" IN (SELECT "value" FROM json_each(?))`;
        const active = intentsWhere(
          `+i."repoId" = ? AND +i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named("output")} UNION ${named("capability")} UNION ${named("component")})`,
          `ORDER BY i."createdAt" ASC, i."id" ASC`,
        ).all(
          repoId,
          sqliteTime(cutoff),
          repoId,
          of("output"),
          repoId,
          of("capability"),
          repoId,
          of("component"),
        );
        const completed = lookup.completed.length
          ? intentsWhere(
              `+i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named("output")})`,
              `ORDER BY i."createdAt" ASC, i."id" ASC`,
            ).all(repoId, repoId, JSON.stringify(lookup.completed))
          : [];
        return [...(active as Row[]), ...(completed as Row[])].map(toIntentRow);
      },
      completed: (repoId: string, take: number) =>
        (
          intentsWhere(
            `i."repoId" = ? AND i."state" = 'completed'`,
            `ORDER BY i."closedAt" DESC LIMIT ?`,
          ).all(repoId, take) as Row[]
        ).map(toIntentRow),
      openIdsOfSession: (sessionId: string) =>
        (
          st(`SELECT "id" FROM "Intent" WHERE "sessionId" = ? AND "closedAt" IS NULL`).all(sessionId) as {
            id: string;
          }[]
        ).map((r) => r.id),
      create: (i: {
        id: string;
        repoId: string;
        sessionId: string;
        person: string;
        client: string | null;
        model: string | null;
        prompt: string;
        promptPaths: string[];
        at: Date;
      }) => {
        const at = sqliteTime(i.at);
        st(
          `INSERT INTO "Intent" ("id", "repoId", "sessionId", "person", "client", "model", "prompt", "promptPaths", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          i.id,
          i.repoId,
          i.sessionId,
          i.person,
          i.client,
          i.model,
          i.prompt,
          json(i.promptPaths),
          at,
          at,
        );
      },
      update: (
        id: string,
        change: {
          record?: IntentRecord;
          usage?: Usage;
          state?: string;
          lastAction?: string;
          updatedAt?: Date;
          closedAt?: Date;
        },
      ) => {
        const cols: string[] = [];
        const vals: unknown[] = [];
        for (const [k, v] of Object.entries(change)) {
          if (v === undefined) continue;
          cols.push(k);
          vals.push(k === "record" || k === "usage" ? json(v) : v instanceof Date ? sqliteTime(v) : v);
        }
        if (!cols.length) return;
        const r = st(`UPDATE "Intent" SET ${cols.map((c) => `"${c}" = ?`).join(", ")} WHERE "id" = ?`).run(
          ...vals,
          id,
        );
        if (r.changes !== 1) throw new Error(`intent ${id} not found`);
        if (change.record) {
          // The resolver index follows the record, in the same transaction.
          st(`DELETE FROM "IntentName" WHERE "intentId" = ?`).run(id);
          const add = st(
            `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") SELECT "repoId", ?, ?, "id" FROM "Intent" WHERE "id" = ?`,
          );
          for (const n of indexNames(change.record)) add.run(n.kind, n.name, id);
        }
      },
      addCheckpoint: (k: {
        id: string;
        intentId: string;
        status: string;
        summary: string;
        paths: string[] | null;
        source: string;
        commit?: string | null;
        at: Date;
      }) => {
        st(
          `INSERT INTO "Checkpoint" ("id", "intentId", "status", "summary", "paths", "source", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          k.id,
          k.intentId,
          k.status,
          k.summary,
          k.paths ? json(k.paths) : null,
          k.commit ? commitSource(k.commit) : k.source,
          sqliteTime(k.at),
        );
      },
    },
    claims: {
      pathsOf: (intentId: string) => {
        const r = st(`SELECT "paths" FROM "Claim" WHERE "intentId" = ?`).get(intentId) as
          { paths: string } | undefined;
        return r ? list(r.paths) : null;
      },
      peers: (repoId: string, exceptIntentId: string): PeerClaim[] =>
        (
          st(`SELECT c."intentId", c."paths", i."person", i."client", i."model", i."record" FROM "Claim" c JOIN "Intent" i ON i."id" = c."intentId"
              WHERE c."repoId" = ? AND c."intentId" <> ? ORDER BY c."updatedAt" ASC`).all(
            repoId,
            exceptIntentId,
          ) as Row[]
        ).map((r) => ({
          intentId: r.intentId as string,
          person: r.person as string,
          client: r.client as string | null,
          model: r.model as string | null,
          objective: recordOf(r.record as string | null)?.objective ?? null,
          paths: list(r.paths as string),
        })),
      expired: (repoId: string, cutoff: Date) =>
        (
          st(`SELECT c."intentId" FROM "Claim" c JOIN "Intent" i ON i."id" = c."intentId" JOIN "Session" s ON s."id" = i."sessionId"
              WHERE c."repoId" = ? AND s."lastSeenAt" < ?`).all(repoId, sqliteTime(cutoff)) as {
            intentId: string;
          }[]
        ).map((r) => r.intentId),
      set: (c: { intentId: string; repoId: string; paths: string[]; at: Date }) => {
        st(`INSERT INTO "Claim" ("intentId", "repoId", "paths", "updatedAt") VALUES (?, ?, ?, ?)
            ON CONFLICT ("intentId") DO UPDATE SET "paths" = excluded."paths", "updatedAt" = excluded."updatedAt"`).run(
          c.intentId,
          c.repoId,
          json(c.paths),
          sqliteTime(c.at),
        );
      },
      release: (intentId: string) => st(`DELETE FROM "Claim" WHERE "intentId" = ?`).run(intentId).changes > 0,
    },
  };
}
export type SqliteStatements = ReturnType<typeof sqliteStatements>;
