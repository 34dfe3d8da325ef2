import type { Action, Control, IntentRecord } from "@cohent/protocol";
import { indexNames, type NameLookup } from "../core/resolver-index.js";
import type { ActivePeer, IntentRow, Intents } from "./contract.js";
import type { Handle } from "./handle.js";
import { cached } from "./memory.js";
import { commitSource, json, list, recordOf, sharedList, toCommit, toParty } from "./rows.js";
import { inListSql, listParam, type Dialect, type Exec, type Row } from "./sql/exec.js";
import { insert, setSql, T, type Models } from "./sql/tables.js";

const LAST_CP: Record<Dialect, string> = {
  sqlite: `(SELECT json_array(k."status", k."summary", k."createdAt") FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
  postgres: `(SELECT json_build_array(k."status", k."summary", to_char(k."createdAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
};
const INTENT_COLUMNS = T.Intent.cols("i");
const intentColumns = (d: Dialect) =>
  `${INTENT_COLUMNS}, s."key" AS "sKey", s."lastSeenAt" AS "sLastSeenAt", s."control" AS "sControl", s."controlReason" AS "sControlReason", c."paths" AS "claimPaths", ${LAST_CP[d]} AS "lastCp"`;
const INTENT_FROM = `FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" LEFT JOIN "Claim" c ON c."intentId" = i."id"`;
/** An intent's place (`update`): one more than its repository's highest, an index seek on (repoId, place). */
const PLACE = `"place" = (SELECT COALESCE(MAX(p."place"), 0) + 1 FROM "Intent" p WHERE p."repoId" = "Intent"."repoId")`;

const text = (v: unknown) => (v ?? null) as string | null;
const date = (v: unknown) =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);

/**
 * The one decoder of an intent: with its claim, its last checkpoint and its session's liveness. One
 * object literal, the columns decoded as T.Intent.decode does (decodeValue): the generic decode, then
 * a rest and a spread, cost as much as the statement (the publish's 4 peers: ~40 of ~130 µs in recent).
 */
function toIntentRow(row: Row): IntentRow {
  // Typed by the model's columns: one renamed or dropped in the schema fails the typecheck here.
  const r = row as Row & Record<keyof Models.Intent, unknown>;
  const cp = r.lastCp ? (JSON.parse(r.lastCp as string) as [string, string, string]) : null;
  return {
    id: r.id as string,
    repoId: r.repoId as string,
    sessionId: r.sessionId as string,
    person: r.person as string,
    client: text(r.client),
    model: text(r.model),
    prompt: r.prompt as string,
    state: r.state as string,
    lastAction: r.lastAction as Action,
    place: r.place === null || r.place === undefined ? null : Number(r.place),
    createdAt: date(r.createdAt)!,
    updatedAt: date(r.updatedAt)!,
    closedAt: date(r.closedAt),
    promptPaths: list(r.promptPaths as string | null),
    record: recordOf(r.record as string | null),
    scope: sharedList(r.claimPaths as string | null), // the paths it claims now (shared: rows.ts)
    lastCheckpoint: cp ? { status: cp[0], summary: cp[1], at: new Date(cp[2]).toISOString() } : null,
    session: {
      key: r.sKey as string,
      lastSeenAt: new Date(r.sLastSeenAt as string),
      control: r.sControl as Control,
      controlReason: r.sControlReason as string | null,
    },
  };
}

const toPeer = ({ id, place, state, record, lastAction, scope }: IntentRow): ActivePeer => ({
  id,
  place,
  state,
  record,
  lastAction,
  scope,
});

const ORDERED = `ORDER BY i."createdAt" ASC, i."id" ASC`;
const SELECT_INTENTS: Record<Dialect, string> = {
  sqlite: `SELECT ${intentColumns("sqlite")} ${INTENT_FROM}`,
  postgres: `SELECT ${intentColumns("postgres")} ${INTENT_FROM}`,
};
const intentsSql = (dialect: Dialect, where: string, order: string) =>
  `${SELECT_INTENTS[dialect]} WHERE ${where} ${order}`;
const many = async (rows: Promise<Row[]>) => (await rows).map(toIntentRow);

/** Whether the intent's indexed names are exactly `names`. */
async function sameNames(x: Exec, intentId: string, names: readonly { kind: string; name: string }[]) {
  const held = await x.all(`SELECT "kind", "name" FROM "IntentName" WHERE "intentId" = ?`, intentId);
  const wanted = new Set(names.map((n) => `${n.kind}\u0000${n.name}`));
  return (
    held.length === wanted.size &&
    held.every((r) => wanted.has(`${r.kind as string}\u0000${r.name as string}`))
  );
}

/** Open intents whose session was seen at or after `cutoff`: the repository's active work, oldest first. */
const activeRows = (x: Exec, repoId: string, cutoff: Date) =>
  many(
    x.all(
      intentsSql(x.dialect, `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ?`, ORDERED),
      repoId,
      x.time(cutoff),
    ),
  );
const byIdRows = async (x: Exec, ids: string[]) =>
  ids.length
    ? many(x.all(intentsSql(x.dialect, inListSql(x.dialect, `i."id"`), ""), listParam(x.dialect, ids)))
    : [];

type Change = Parameters<Intents["update"]>[1];

/**
 * Work intents (decoded, with their claim, last checkpoint and session liveness) and their checkpoints.
 * A class, its methods built once: a write's transaction makes one object of it, not the ~30 closures
 * of a factory (each named by the transpiler's keepNames: ~10 µs a transaction, bench:load).
 */
class IntentStore implements Intents {
  private readonly h: Handle;
  constructor(h: Handle) {
    this.h = h;
  }
  async get(id: string) {
    const { x } = this.h;
    const r = await x.get(intentsSql(x.dialect, `i."id" = ?`, ""), id);
    return r ? toIntentRow(r) : null;
  }

  /** The intent's own row, without relations or decoding: what ownership checks and plain writes need. */
  async head(id: string) {
    const r = await this.h.x.get(
      `SELECT "id", "repoId", "sessionId", "state", "closedAt", "lastAction" FROM "Intent" WHERE "id" = ?`,
      id,
    );
    return r
      ? {
          id: r.id as string,
          repoId: r.repoId as string,
          sessionId: r.sessionId as string,
          state: r.state as string,
          closedAt: r.closedAt === null ? null : new Date(r.closedAt as string),
          lastAction: r.lastAction as Action,
        }
      : null;
  }

  /** Only where it lives and whose it is: the poll's cheap path (neither ever changes: held in memory). */
  owner(id: string) {
    const { h } = this;
    return cached.kept(h, "owner", id, async () => {
      const r = await h.x.get(`SELECT "repoId", "sessionId" FROM "Intent" WHERE "id" = ?`, id);
      return r ? { repoId: r.repoId as string, sessionId: r.sessionId as string } : null;
    });
  }

  async openIdsOfSession(sessionId: string) {
    return (
      await this.h.x.all(`SELECT "id" FROM "Intent" WHERE "sessionId" = ? AND "closedAt" IS NULL`, sessionId)
    ).map((r) => r.id as string);
  }

  async latestOpenOfSession(sessionId: string) {
    const { x } = this.h;
    const r = await x.get(
      intentsSql(
        x.dialect,
        `i."sessionId" = ? AND i."closedAt" IS NULL`,
        `ORDER BY i."createdAt" DESC LIMIT 1`,
      ),
      sessionId,
    );
    return r ? toIntentRow(r) : null;
  }

  active(repoId: string, cutoff: Date) {
    return activeRows(this.h.x, repoId, cutoff);
  }

  /**
   * `active`'s resolver fields, the record from memory. A record is written only with a new place
   * (`update`: one more than the repository's highest, unique in it), so an intent's place names
   * its record: the read is the short columns of every active intent, and the records of those
   * whose place this store has not seen. Membership and the short columns come from the
   * database each time (a lapsed lease writes no event). Only outside a transaction: a record
   * read inside one may still roll back, and its place be taken again.
   */
  async activePeers(repoId: string, cutoff: Date): Promise<ActivePeer[]> {
    const { h } = this;
    const { x } = h;
    if (h.tx) return (await activeRows(x, repoId, cutoff)).map(toPeer);
    const heads = await x.all(
      `SELECT i."id", i."place", i."state", i."lastAction", c."paths" AS "claimPaths" FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" LEFT JOIN "Claim" c ON c."intentId" = i."id" WHERE i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ? ${ORDERED}`,
      repoId,
      x.time(cutoff),
    );
    const placed = h.mem<string, IntentRecord>("placed");
    const at = (id: unknown, place: unknown) => `${id as string}@${Number(place)}`;
    const records = new Map<string, IntentRecord>();
    const missing: string[] = [];
    for (const r of heads) {
      if (r.place === null) continue;
      const held = placed.get(at(r.id, r.place));
      if (held) records.set(at(r.id, r.place), held);
      else missing.push(r.id as string);
    }
    if (missing.length) {
      const rows = await x.all(
        `SELECT "id", "place", "record" FROM "Intent" WHERE ${inListSql(x.dialect, `"id"`)} AND "place" IS NOT NULL`,
        listParam(x.dialect, missing),
      );
      for (const r of rows) {
        const record = recordOf(r.record as string | null);
        if (!record) continue;
        placed.set(at(r.id, r.place), record);
        records.set(at(r.id, r.place), record);
      }
    }
    const peers: ActivePeer[] = [];
    for (const r of heads) {
      const record = r.place === null ? null : records.get(at(r.id, r.place));
      // Its record written again between the two reads: the whole rows, as `active` reads them.
      if (record === undefined) return (await activeRows(x, repoId, cutoff)).map(toPeer);
      peers.push({
        id: r.id as string,
        place: r.place === null ? null : Number(r.place),
        state: r.state as string,
        record,
        lastAction: r.lastAction as Action,
        scope: sharedList(r.claimPaths as string | null),
      });
    }
    return peers;
  }

  /** The `take` most recently updated active intents, newest first: the ids first, so only those load. */
  async recent(repoId: string, cutoff: Date, take: number) {
    const { x } = this.h;
    const newest = `SELECT j."id" FROM "Intent" j JOIN "Session" t ON t."id" = j."sessionId" WHERE j."repoId" = ? AND j."closedAt" IS NULL AND t."lastSeenAt" >= ? ORDER BY j."updatedAt" DESC, j."createdAt" ASC, j."id" ASC LIMIT ?`;
    if (x.dialect === "postgres")
      return many(
        x.all(
          intentsSql(
            x.dialect,
            `i."id" IN (${newest})`,
            `ORDER BY i."updatedAt" DESC, i."createdAt" ASC, i."id" ASC`,
          ),
          repoId,
          x.time(cutoff),
          take,
        ),
      );
    // SQLite: two statements cost less than the one with the subquery (measured 68-106 µs against
    // 88-171 with 17 active intents), and a round trip is nothing there; the ids give the order.
    const ids = (await x.all(newest, repoId, x.time(cutoff), take)).map((r) => r.id as string);
    const rows = await byIdRows(x, ids);
    return rows.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
  }

  /** Every open intent, live or not, oldest first. */
  open(repoId: string) {
    const { x } = this.h;
    return many(x.all(intentsSql(x.dialect, `i."repoId" = ? AND i."closedAt" IS NULL`, ORDERED), repoId));
  }

  openOfToken(repoId: string, tokenId: string) {
    const { x } = this.h;
    return many(
      x.all(
        intentsSql(
          x.dialect,
          `i."repoId" = ? AND i."closedAt" IS NULL AND s."tokenId" = ?`,
          `ORDER BY i."createdAt" ASC`,
        ),
        repoId,
        tokenId,
      ),
    );
  }

  completed(repoId: string, take: number) {
    const { x } = this.h;
    return many(
      x.all(
        intentsSql(
          x.dialect,
          `i."repoId" = ? AND i."state" = 'completed'`,
          `ORDER BY i."closedAt" DESC LIMIT ?`,
        ),
        repoId,
        take,
      ),
    );
  }

  /** The resolver's candidate peers through the IntentName index: active and completed, oldest first. */
  async candidates(repoId: string, lookup: NameLookup, cutoff: Date) {
    const { x } = this.h;
    const { dialect } = x;
    if (dialect === "sqlite") {
      // SQLite: the unary `+` keeps it from walking the repository's intents (it looks up the named ids).
      // Each (kind, name) looked up in the index, the list driving the join (CROSS JOIN keeps that
      // order): one UNION of three IN lists, each merged through temporary B-trees, took ~145 µs
      // with nothing found; this takes ~13.
      const named = `SELECT n."intentId" FROM json_each(?) j CROSS JOIN "IntentName" n ON n."repoId" = ? AND n."kind" = json_extract(j."value", '$[0]') AND n."name" = json_extract(j."value", '$[1]')`;
      const pairs = (kinds: { kind: string; names: string[] }[]) =>
        JSON.stringify(kinds.flatMap((k) => k.names.map((name) => [k.kind, name])));
      const active = lookup.active.length
        ? await many(
            x.all(
              intentsSql(
                dialect,
                `+i."repoId" = ? AND +i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named})`,
                ORDERED,
              ),
              repoId,
              x.time(cutoff),
              pairs(lookup.active),
              repoId,
            ),
          )
        : [];
      const completed = lookup.completed.length
        ? await many(
            x.all(
              intentsSql(
                dialect,
                `+i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named})`,
                ORDERED,
              ),
              repoId,
              pairs([{ kind: "output", names: lookup.completed }]),
              repoId,
            ),
          )
        : [];
      return [...active, ...completed];
    }
    const of = (kind: string) => listParam(dialect, lookup.active.find((k) => k.kind === kind)?.names ?? []);
    const named = (kind: string) =>
      `SELECT "intentId" FROM "IntentName" WHERE "repoId" = ? AND "kind" = '${kind}' AND ${inListSql(dialect, `"name"`)}`;
    // Both sent before either answer is awaited: one round trip.
    const active = many(
      x.all(
        intentsSql(
          dialect,
          `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named("output")} UNION ${named("capability")} UNION ${named("component")})`,
          ORDERED,
        ),
        repoId,
        x.time(cutoff),
        repoId,
        of("output"),
        repoId,
        of("capability"),
        repoId,
        of("component"),
      ),
    );
    const completed = lookup.completed.length
      ? many(
          x.all(
            intentsSql(
              dialect,
              `i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named("output")})`,
              ORDERED,
            ),
            repoId,
            repoId,
            listParam(dialect, lookup.completed),
          ),
        )
      : Promise.resolve([]);
    const [a, b] = await Promise.all([active, completed]);
    return [...a, ...b];
  }

  byIds(ids: string[]) {
    return byIdRows(this.h.x, ids);
  }

  async parties(ids: string[]) {
    const { x } = this.h;
    return ids.length
      ? (
          await x.all(
            `SELECT "id", "person", "client", "model", "record" FROM "Intent" WHERE ${inListSql(x.dialect, `"id"`)}`,
            listParam(x.dialect, ids),
          )
        ).map((r) =>
          toParty(
            r as {
              id: string;
              person: string;
              client: string | null;
              model: string | null;
              record: string | null;
            },
          ),
        )
      : [];
  }

  /**
   * The peers the intent's last decision named, and the oldest lease renewal among those not
   * completed (null: none); outside a transaction, from memory until the repository's events move.
   */
  namedPeers(intentId: string, repoId: string) {
    const { h } = this;
    const { x } = h;
    return cached.stamped(h, "named", intentId, repoId, "events", async () => {
      const last = await x.get(
        `SELECT "peerIds" FROM "Decision" WHERE "intentId" = ? AND "repoId" = ? ORDER BY "createdAt" DESC LIMIT 1`,
        intentId,
        repoId,
      );
      const named = list(last?.peerIds as string | undefined);
      if (!named.length) return { named, oldestSeen: null };
      const seen = await x.get(
        `SELECT MIN(s."lastSeenAt") AS "at" FROM "Session" s WHERE s."id" IN
          (SELECT i."sessionId" FROM "Intent" i WHERE ${inListSql(x.dialect, `i."id"`)} AND i."state" <> 'completed')`,
        listParam(x.dialect, named),
      );
      return { named, oldestSeen: seen?.at ? new Date(seen.at as string) : null };
    });
  }

  async create({ at, promptPaths, ...i }: Parameters<Intents["create"]>[0]) {
    await insert(this.h.x, T.Intent, { ...i, promptPaths: json(promptPaths), createdAt: at, updatedAt: at });
  }

  /**
   * Writes the intent's columns. A record also gives it its place in its repository's decisions,
   * one more than the highest there, each time: the caller holds the repository lock (journal
   * `lock`) and decides it next, so places follow the order in which records are decided.
   */
  async update(id: string, change: Change) {
    const { x } = this.h;
    const { record, usage, ...rest } = change;
    const { sets, args } = setSql(x, {
      ...rest,
      record: record ? json(record) : undefined,
      usage: usage ? json(usage) : undefined,
    });
    if (!sets.length) return;
    if (record) sets.push(PLACE);
    await x.later(`UPDATE "Intent" SET ${sets.join(", ")} WHERE "id" = ?`, [...args, id], 1);
    // The resolver index follows the record, in the same transaction. A record whose names are
    // those already indexed (a new state or objective, the common update) leaves its rows alone:
    // a read instead of a delete and an insert that would rewrite the same index pages.
    const names = record ? indexNames(record) : null;
    if (names && !(await sameNames(x, id, names))) {
      await x.later(`DELETE FROM "IntentName" WHERE "intentId" = ?`, [id]);
      if (names.length) {
        // One statement for every name: one round trip on PostgreSQL.
        if (x.dialect === "sqlite")
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
  }

  async addCheckpoint({ at, paths, commit, source, ...cp }: Parameters<Intents["addCheckpoint"]>[0]) {
    await insert(this.h.x, T.Checkpoint, {
      ...cp,
      source: commit ? commitSource(commit) : source,
      paths: paths ? json(paths) : null,
      createdAt: at,
    });
  }

  /** The commits recorded for these intents, oldest first, by intent. */
  async commits(ids: string[]) {
    const { x } = this.h;
    const rows = ids.length
      ? (
          await x.all(
            `SELECT ${T.Checkpoint.cols()} FROM "Checkpoint" WHERE ${inListSql(x.dialect, `"intentId"`)} AND "source" LIKE 'commit:%' ORDER BY "createdAt" ASC, "id" ASC`,
            listParam(x.dialect, ids),
          )
        ).map((r) => T.Checkpoint.decode(r))
      : [];
    const out = new Map<string, ReturnType<typeof toCommit>[]>();
    for (const k of rows) out.set(k.intentId, [...(out.get(k.intentId) ?? []), toCommit(k)]);
    return out;
  }
}

export const intents = (h: Handle): Intents => new IntentStore(h);
