import type { Action, Control, IntentRecord, Usage } from "@cohent/protocol";
import type { PeerClaim } from "../core/arbitrate.js";
import { indexNames, type NameLookup } from "../core/resolver-index.js";
import { commitSource, json, list, recordOf, toDecision, type IntentRow } from "./rows.js";
import { rawOf } from "./shell.js";
import { inListSql, listParam, pgExec, sqliteExec, type Dialect, type Exec, type Row } from "./sql/exec.js";

export {
  counting,
  inListSql,
  listParam,
  pgExec,
  sendLater,
  settle,
  sqliteExec,
  sqliteTime,
} from "./sql/exec.js";
export type { Dialect, Exec } from "./sql/exec.js";

const date = (v: string | Date) => new Date(v);
const dateOrNull = (v: string | Date | null) => (v === null ? null : new Date(v));

const LAST_CP: Record<Dialect, string> = {
  sqlite: `(SELECT json_array(k."status", k."summary", k."createdAt") FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
  postgres: `(SELECT json_build_array(k."status", k."summary", to_char(k."createdAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
};
const intentColumns = (
  d: Dialect,
) => `i."id", i."repoId", i."sessionId", i."person", i."client", i."model", i."prompt", i."promptPaths", i."record", i."state", i."lastAction", i."place",
  i."createdAt", i."updatedAt", i."closedAt", s."key" AS "sKey", s."lastSeenAt" AS "sLastSeenAt", s."control" AS "sControl", s."controlReason" AS "sControlReason",
  c."paths" AS "claimPaths", ${LAST_CP[d]} AS "lastCp"`;
/** An intent's place (store/intents `update`): one more than its repository's highest, an index seek on (repoId, place). */
const PLACE = `"place" = (SELECT COALESCE(MAX(p."place"), 0) + 1 FROM "Intent" p WHERE p."repoId" = "Intent"."repoId")`;
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
    place: r.place === null || r.place === undefined ? null : Number(r.place),
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

/**
 * Statements built by `make` on a store transaction's own connection, once per
 * connection; null for a handle outside any transaction (Prisma answers there).
 */
export function onConnection<S>(make: (x: Exec) => S): (c: object) => S | null {
  const built = new WeakMap<object, S>();
  return (c) => {
    const raw = rawOf(c);
    const conn = raw?.sqlite ?? raw?.pg;
    if (!conn) return null;
    let s = built.get(conn);
    if (!s) built.set(conn, (s = make(raw!.sqlite ? sqliteExec(raw!.sqlite) : pgExec(raw!.pg!))));
    return s;
  };
}

/** A list parameter: a JSON array on SQLite (json_each), an array on PostgreSQL. */
export function statements(x: Exec) {
  const { dialect, time } = x;
  const intentsSql = (where: string, order: string) =>
    `SELECT ${intentColumns(dialect)} ${INTENT_FROM} WHERE ${where} ${order}`;
  const inList = (column: string) => inListSql(dialect, column);
  const listArg = (names: string[]) => listParam(dialect, names);
  // SQLite: the unary `+` keeps it from walking the repository's intents (it looks up the named ids).
  const noIndex = dialect === "sqlite" ? "+" : "";

  const intentsOf = async (rows: Promise<Row[]>) => (await rows).map(toIntentRow);
  /** Whether the intent's indexed names are exactly `names`. */
  const sameNames = async (intentId: string, names: { kind: string; name: string }[]) => {
    const held = await x.all(`SELECT "kind", "name" FROM "IntentName" WHERE "intentId" = ?`, intentId);
    const wanted = new Set(names.map((n) => `${n.kind}\u0000${n.name}`));
    return (
      held.length === wanted.size &&
      held.every((r) => wanted.has(`${r.kind as string}\u0000${r.name as string}`))
    );
  };
  return {
    journal: {
      // SQLite: the transaction's BEGIN IMMEDIATE already holds the database's write lock, and the
      // row's update would only add a page to every commit.
      lockRow:
        dialect === "sqlite"
          ? async (_repoId: string) => 0
          : (repoId: string) =>
              x.later(`UPDATE "Repository" SET "claimVersion" = "claimVersion" + 1 WHERE "id" = ?`, [repoId]),
      /** Appends an event; `seq` is its number, sent ahead on PostgreSQL (nothing waits for it but the packet's cursor). */
      addEvent: (e: {
        repoId: string;
        intentId: string;
        kind: string;
        summary: string;
        peerIds: string[];
        at: Date;
      }) => {
        const seq = x
          .ahead(
            `INSERT INTO "Event" ("repoId", "intentId", "kind", "peerIds", "summary", "createdAt") VALUES (?, ?, ?, ?, ?, ?) RETURNING "seq"`,
            [e.repoId, e.intentId, e.kind, json(e.peerIds), e.summary.slice(0, 500), time(e.at)],
          )
          .row.then((r) => Number(r!.seq));
        seq.catch(() => {}); // reported by `settle`
        return { seq };
      },
      latestSeq: async (repoId: string) =>
        Number((await x.get(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`, repoId))?.seq ?? 0),
      lastDecision: async (intentId: string) => {
        const r = await x.get(
          `SELECT "id", "intentId", "action", "peerIds", "reason", "createdAt" FROM "Decision" WHERE "intentId" = ? ORDER BY "createdAt" DESC LIMIT 1`,
          intentId,
        );
        return r
          ? toDecision({
              ...(r as { id: string; intentId: string; action: string; peerIds: string; reason: string }),
              createdAt: date(r.createdAt as string),
            })
          : null;
      },
      addDecision: async (d: {
        id: string;
        repoId: string;
        intentId: string;
        action: Action;
        peerIds: string[];
        reason: string;
        at: Date;
      }) => {
        await x.later(
          `INSERT INTO "Decision" ("id", "repoId", "intentId", "action", "peerIds", "reason", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [d.id, d.repoId, d.intentId, d.action, json(d.peerIds), d.reason, time(d.at)],
        );
        return toDecision({ ...d, peerIds: json(d.peerIds), createdAt: d.at });
      },
      addPacket: async (p: {
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
        await x.later(
          `INSERT INTO "Packet" ("id", "repoId", "intentId", "sessionId", "kind", "action", "cursor", "chars", "tokens", "peerIds", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
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
            time(p.at),
          ],
        );
      },
    },
    sessions: {
      setClient: async (id: string, client: string | null, model: string | null) => {
        await x.later(`UPDATE "Session" SET "client" = ?, "model" = ? WHERE "id" = ?`, [client, model, id]);
      },
    },
    intents: {
      head: async (id: string) => {
        const r = await x.get(
          `SELECT "id", "repoId", "sessionId", "state", "closedAt", "lastAction" FROM "Intent" WHERE "id" = ?`,
          id,
        );
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
      get: async (id: string) => {
        const r = await x.get(intentsSql(`i."id" = ?`, ""), id);
        return r ? toIntentRow(r) : null;
      },
      active: (repoId: string, cutoff: Date) =>
        intentsOf(
          x.all(
            intentsSql(
              `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ?`,
              `ORDER BY i."createdAt" ASC, i."id" ASC`,
            ),
            repoId,
            time(cutoff),
          ),
        ),
      /** The `take` most recently updated active intents, newest first: the ids first, so only those load. */
      recent: async (repoId: string, cutoff: Date, take: number) => {
        const newest = `SELECT j."id" FROM "Intent" j JOIN "Session" t ON t."id" = j."sessionId" WHERE j."repoId" = ? AND j."closedAt" IS NULL AND t."lastSeenAt" >= ? ORDER BY j."updatedAt" DESC, j."createdAt" ASC, j."id" ASC LIMIT ?`;
        if (dialect === "postgres")
          return intentsOf(
            x.all(
              intentsSql(
                `i."id" IN (${newest})`,
                `ORDER BY i."updatedAt" DESC, i."createdAt" ASC, i."id" ASC`,
              ),
              repoId,
              time(cutoff),
              take,
            ),
          );
        // SQLite: two statements cost less than the one with the subquery (measured 68-106 µs against
        // 88-171 with 17 active intents), and a round trip is nothing there; the ids give the order.
        const ids = (await x.all(newest, repoId, time(cutoff), take)).map((r) => r.id as string);
        if (!ids.length) return [];
        const rows = await intentsOf(x.all(intentsSql(inList(`i."id"`), ""), listArg(ids)));
        return rows.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
      },
      /** The resolver's candidate peers through the IntentName index: active and completed, oldest first. */
      candidates: async (repoId: string, lookup: NameLookup, cutoff: Date) => {
        const order = `ORDER BY i."createdAt" ASC, i."id" ASC`;
        if (dialect === "sqlite") {
          // Each (kind, name) looked up in the index, the list driving the join (CROSS JOIN keeps that
          // order): one UNION of three IN lists, each merged through temporary B-trees, took ~145 µs
          // with nothing found; this takes ~13.
          const named = `SELECT n."intentId" FROM json_each(?) j CROSS JOIN "IntentName" n ON n."repoId" = ? AND n."kind" = json_extract(j."value", '$[0]') AND n."name" = json_extract(j."value", '$[1]')`;
          const pairs = (kinds: { kind: string; names: string[] }[]) =>
            JSON.stringify(kinds.flatMap((k) => k.names.map((name) => [k.kind, name])));
          const active = lookup.active.length
            ? await intentsOf(
                x.all(
                  intentsSql(
                    `${noIndex}i."repoId" = ? AND ${noIndex}i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named})`,
                    order,
                  ),
                  repoId,
                  time(cutoff),
                  pairs(lookup.active),
                  repoId,
                ),
              )
            : [];
          const completed = lookup.completed.length
            ? await intentsOf(
                x.all(
                  intentsSql(
                    `${noIndex}i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named})`,
                    order,
                  ),
                  repoId,
                  pairs([{ kind: "output", names: lookup.completed }]),
                  repoId,
                ),
              )
            : [];
          return [...active, ...completed];
        }
        const of = (kind: string) => listArg(lookup.active.find((k) => k.kind === kind)?.names ?? []);
        const named = (kind: string) =>
          `SELECT "intentId" FROM "IntentName" WHERE "repoId" = ? AND "kind" = '${kind}' AND ${inList(`"name"`)}`;
        // Both sent before either answer is awaited: one round trip.
        const active = intentsOf(
          x.all(
            intentsSql(
              `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named("output")} UNION ${named("capability")} UNION ${named("component")})`,
              order,
            ),
            repoId,
            time(cutoff),
            repoId,
            of("output"),
            repoId,
            of("capability"),
            repoId,
            of("component"),
          ),
        );
        const completed = lookup.completed.length
          ? intentsOf(
              x.all(
                intentsSql(
                  `i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named("output")})`,
                  order,
                ),
                repoId,
                repoId,
                listArg(lookup.completed),
              ),
            )
          : Promise.resolve([]);
        const [a, b] = await Promise.all([active, completed]);
        return [...a, ...b];
      },
      completed: (repoId: string, take: number) =>
        intentsOf(
          x.all(
            intentsSql(`i."repoId" = ? AND i."state" = 'completed'`, `ORDER BY i."closedAt" DESC LIMIT ?`),
            repoId,
            take,
          ),
        ),
      openIdsOfSession: async (sessionId: string) =>
        (
          await x.all(`SELECT "id" FROM "Intent" WHERE "sessionId" = ? AND "closedAt" IS NULL`, sessionId)
        ).map((r) => r.id as string),
      create: async (i: {
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
        const at = time(i.at);
        await x.later(
          `INSERT INTO "Intent" ("id", "repoId", "sessionId", "person", "client", "model", "prompt", "promptPaths", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [i.id, i.repoId, i.sessionId, i.person, i.client, i.model, i.prompt, json(i.promptPaths), at, at],
        );
      },
      update: async (
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
          vals.push(k === "record" || k === "usage" ? json(v) : v instanceof Date ? time(v) : v);
        }
        if (!cols.length) return;
        const sets = cols.map((c) => `"${c}" = ?`);
        // A record takes the intent's place anew (store/intents `update`).
        if (change.record) sets.push(PLACE);
        await x.later(`UPDATE "Intent" SET ${sets.join(", ")} WHERE "id" = ?`, [...vals, id], 1);
        // The resolver index follows the record, in the same transaction. A record whose names are
        // those already indexed (a new state or objective, the common update) leaves its rows alone:
        // a read instead of a delete and an insert that would rewrite the same index pages.
        const names = change.record ? indexNames(change.record) : null;
        if (names && !(await sameNames(id, names))) {
          await x.later(`DELETE FROM "IntentName" WHERE "intentId" = ?`, [id]);
          if (names.length) {
            // One statement for every name: one round trip on PostgreSQL.
            if (dialect === "sqlite")
              await x.later(
                `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") SELECT i."repoId", json_extract(n."value", '$[0]'), json_extract(n."value", '$[1]'), i."id" FROM "Intent" i, json_each(?) n WHERE i."id" = ?`,
                [JSON.stringify(names.map((n) => [n.kind, n.name])), id],
              );
            else
              await x.later(
                `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") SELECT i."repoId", n.k, n.v, i."id" FROM "Intent" i, unnest(?::text[], ?::text[]) AS n(k, v) WHERE i."id" = ?`,
                [names.map((n) => n.kind), names.map((n) => n.name), id],
              );
          }
        }
      },
      addCheckpoint: async (k: {
        id: string;
        intentId: string;
        status: string;
        summary: string;
        paths: string[] | null;
        source: string;
        commit?: string | null;
        at: Date;
      }) => {
        await x.later(
          `INSERT INTO "Checkpoint" ("id", "intentId", "status", "summary", "paths", "source", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [
            k.id,
            k.intentId,
            k.status,
            k.summary,
            k.paths ? json(k.paths) : null,
            k.commit ? commitSource(k.commit) : k.source,
            time(k.at),
          ],
        );
      },
    },
    claims: {
      pathsOf: async (intentId: string) => {
        const r = await x.get(`SELECT "paths" FROM "Claim" WHERE "intentId" = ?`, intentId);
        return r ? list(r.paths as string) : null;
      },
      peers: async (repoId: string, exceptIntentId: string): Promise<PeerClaim[]> =>
        (
          await x.all(
            `SELECT c."intentId", c."paths", i."person", i."client", i."model", i."record" FROM "Claim" c JOIN "Intent" i ON i."id" = c."intentId"
              WHERE c."repoId" = ? AND c."intentId" <> ? ORDER BY c."updatedAt" ASC`,
            repoId,
            exceptIntentId,
          )
        ).map((r) => ({
          intentId: r.intentId as string,
          person: r.person as string,
          client: r.client as string | null,
          model: r.model as string | null,
          objective: recordOf(r.record as string | null)?.objective ?? null,
          paths: list(r.paths as string),
        })),
      expired: async (repoId: string, cutoff: Date) =>
        (
          await x.all(
            `SELECT c."intentId" FROM "Claim" c JOIN "Intent" i ON i."id" = c."intentId" JOIN "Session" s ON s."id" = i."sessionId"
              WHERE c."repoId" = ? AND s."lastSeenAt" < ?`,
            repoId,
            time(cutoff),
          )
        ).map((r) => r.intentId as string),
      set: async (c: { intentId: string; repoId: string; paths: string[]; at: Date }) => {
        await x.later(
          `INSERT INTO "Claim" ("intentId", "repoId", "paths", "updatedAt") VALUES (?, ?, ?, ?)
            ON CONFLICT ("intentId") DO UPDATE SET "paths" = excluded."paths", "updatedAt" = excluded."updatedAt"`,
          [c.intentId, c.repoId, json(c.paths), time(c.at)],
        );
      },
      release: async (intentId: string) =>
        (await x.run(`DELETE FROM "Claim" WHERE "intentId" = ?`, intentId)) > 0,
    },
  };
}
export type Statements = ReturnType<typeof statements>;
