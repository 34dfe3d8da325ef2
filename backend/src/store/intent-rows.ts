import type { Action, Control } from "@cohent/protocol";
import type { IntentRow } from "./contract.js";
import { list, recordOf, sharedList } from "./rows.js";
import { inListSql, listParam, type Dialect, type Exec, type Row } from "./sql/exec.js";
import { T, type Models } from "./sql/tables.js";

// How an intent is read (store/intents): the one SELECT, with its session and
// claim joined and its last checkpoint as a subquery, and the one decoder.

const LAST_CP: Record<Dialect, string> = {
  sqlite: `(SELECT json_array(k."status", k."summary", k."createdAt") FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
  postgres: `(SELECT json_build_array(k."status", k."summary", to_char(k."createdAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text FROM "Checkpoint" k WHERE k."intentId" = i."id" ORDER BY k."createdAt" DESC LIMIT 1)`,
};
const INTENT_COLUMNS = T.Intent.cols("i");
const intentColumns = (d: Dialect) =>
  `${INTENT_COLUMNS}, s."key" AS "sKey", s."lastSeenAt" AS "sLastSeenAt", s."control" AS "sControl", s."controlReason" AS "sControlReason", c."paths" AS "claimPaths", ${LAST_CP[d]} AS "lastCp"`;
const INTENT_FROM = `FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" LEFT JOIN "Claim" c ON c."intentId" = i."id"`;

const text = (v: unknown) => (v ?? null) as string | null;
const date = (v: unknown) =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);

/**
 * The one decoder of an intent: with its claim, its last checkpoint and its session's liveness. One
 * object literal, the columns decoded as T.Intent.decode does (decodeValue): the generic decode, then
 * a rest and a spread, cost as much as the statement (the publish's 4 peers: ~40 of ~130 µs in recent).
 */
export function toIntentRow(row: Row): IntentRow {
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

/** Oldest first; the id settles ties. */
export const ORDERED = `ORDER BY i."createdAt" ASC, i."id" ASC`;
const SELECT_INTENTS: Record<Dialect, string> = {
  sqlite: `SELECT ${intentColumns("sqlite")} ${INTENT_FROM}`,
  postgres: `SELECT ${intentColumns("postgres")} ${INTENT_FROM}`,
};
/** The one SELECT of decoded intents, with a WHERE and an ORDER BY (or "") of its aliases i, s, c. */
export const intentsSql = (dialect: Dialect, where: string, order: string) =>
  `${SELECT_INTENTS[dialect]} WHERE ${where} ${order}`;
export const many = async (rows: Promise<Row[]>) => (await rows).map(toIntentRow);

/** Open intents whose session was seen at or after `cutoff`: the repository's active work, oldest first. */
export const activeRows = (x: Exec, repoId: string, cutoff: Date) =>
  many(
    x.all(
      intentsSql(x.dialect, `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ?`, ORDERED),
      repoId,
      x.time(cutoff),
    ),
  );
/** These intents, in no particular order. */
export const byIdRows = async (x: Exec, ids: string[]) =>
  ids.length
    ? many(x.all(intentsSql(x.dialect, inListSql(x.dialect, `i."id"`), ""), listParam(x.dialect, ids)))
    : [];
