import type * as M from "../../generated/sqlite/client.js";
import type { Exec, Row } from "./exec.js";

/**
 * The row types, from one place: each table's columns are declared against
 * the model type Prisma generates from the schema (prisma/shared), so a
 * column renamed, added or dropped there fails the typecheck here, not a
 * query in production. Every statement that reads a whole row selects
 * `cols()` and decodes with `decode()`; every insert goes through `insert`.
 */
type Kind = "text" | "int" | "bool" | "date";
type KindOf<V> = [V] extends [Date | null]
  ? "date"
  : [V] extends [boolean]
    ? "bool"
    : [V] extends [number | null]
      ? "int"
      : "text";
export type Columns<T> = { [K in keyof T]-?: KindOf<T[K]> };

export interface Table<T> {
  name: string;
  /** The select list: every column, `alias."c"`, or with `prefix`, `alias."c" AS "<prefix>c"` (a join's second table). */
  cols(alias?: string, prefix?: string): string;
  /** A row read with `cols`, with its dates, booleans and integers decoded (both databases). */
  decode(r: Row, prefix?: string): T;
}

function table<T>(name: string, columns: Columns<T>): Table<T> {
  const entries = Object.entries(columns) as [string, Kind][];
  return {
    name,
    cols: (alias, prefix) =>
      entries
        .map(([c]) => `${alias ? `${alias}.` : ""}"${c}"${prefix ? ` AS "${prefix}${c}"` : ""}`)
        .join(", "),
    decode: (r, prefix = "") => {
      const out: Row = {};
      for (const [c, kind] of entries) out[c] = decodeValue(kind, r[prefix + c]);
      return out as T;
    },
  };
}

export function decodeValue(kind: Kind, v: unknown): unknown {
  if (v === null || v === undefined)
    return kind === "text" || kind === "int" || kind === "date" ? null : false;
  if (kind === "date") return v instanceof Date ? v : new Date(v as string);
  if (kind === "int") return Number(v);
  if (kind === "bool") return v === true || v === 1 || v === "1" || v === "t";
  return v;
}

/** A value as the database takes it: dates in Prisma's encoding, booleans as 0 or 1 on SQLite. */
export const encode = (x: Exec, v: unknown): unknown =>
  v instanceof Date ? x.time(v) : typeof v === "boolean" && x.dialect === "sqlite" ? (v ? 1 : 0) : v;

/** INSERT of the given columns (a partial row: the database supplies its defaults for the rest). */
export function insertSql<T>(
  t: Table<T>,
  row: Partial<T>,
): { sql: string; args: unknown[] } & { keys: string[] } {
  const keys = Object.keys(row).filter((k) => (row as Row)[k] !== undefined);
  return {
    sql: `INSERT INTO "${t.name}" (${keys.map((k) => `"${k}"`).join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
    args: [],
    keys,
  };
}
export const insertArgs = <T>(x: Exec, keys: string[], row: Partial<T>) =>
  keys.map((k) => encode(x, (row as Row)[k]));

/** Inserts a row, sent without waiting inside a PostgreSQL transaction (Exec `later`). */
export async function insert<T>(x: Exec, t: Table<T>, row: Partial<T>): Promise<void> {
  const { sql, keys } = insertSql(t, row);
  await x.later(sql, insertArgs(x, keys, row));
}

/** Rows a multi-row INSERT carries at most: well inside both databases' bound on parameters (SQLite 32,766). */
const ROWS_PER_INSERT = 500;

/**
 * Inserts many rows of the same columns, a few hundred to a statement (a set-up file's: one statement
 * a row cost PostgreSQL a statement each, and made a thousand tokens take a second).
 */
export async function insertMany<T>(x: Exec, t: Table<T>, rows: Partial<T>[]): Promise<void> {
  if (rows.length === 0) return;
  const { keys } = insertSql(t, rows[0]!);
  const one = `(${keys.map(() => "?").join(", ")})`;
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const chunk = rows.slice(i, i + ROWS_PER_INSERT);
    await x.later(
      `INSERT INTO "${t.name}" (${keys.map((k) => `"${k}"`).join(", ")}) VALUES ${chunk.map(() => one).join(", ")}`,
      chunk.flatMap((row) => insertArgs(x, keys, row)),
    );
  }
}

/** `"a" = ?, "b" = ?` for an UPDATE, with the encoded values. */
export function setSql(x: Exec, change: Row): { sets: string[]; args: unknown[] } {
  const sets: string[] = [];
  const args: unknown[] = [];
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) continue;
    sets.push(`"${k}" = ?`);
    args.push(encode(x, v));
  }
  return { sets, args };
}

export const T = {
  Repository: table<M.Repository>("Repository", {
    id: "text",
    name: "text",
    goal: "text",
    caseInsensitive: "bool",
    claimVersion: "int",
    createdAt: "date",
  }),
  AgentToken: table<M.AgentToken>("AgentToken", {
    id: "text",
    repoId: "text",
    person: "text",
    client: "text",
    tokenHash: "text",
    createdAt: "date",
    lastUsedAt: "date",
    revokedAt: "date",
  }),
  Session: table<M.Session>("Session", {
    id: "text",
    repoId: "text",
    tokenId: "text",
    key: "text",
    client: "text",
    model: "text",
    control: "text",
    controlReason: "text",
    epoch: "int",
    createdAt: "date",
    lastSeenAt: "date",
    host: "text",
    hostVersion: "text",
    wiring: "text",
    guardSeenAt: "date",
    hostReportedAt: "date",
    checkout: "text",
  }),
  Intent: table<M.Intent>("Intent", {
    id: "text",
    repoId: "text",
    sessionId: "text",
    person: "text",
    client: "text",
    model: "text",
    prompt: "text",
    promptPaths: "text",
    record: "text",
    state: "text",
    lastAction: "text",
    place: "int",
    usage: "text",
    createdAt: "date",
    updatedAt: "date",
    closedAt: "date",
  }),
  IntentName: table<M.IntentName>("IntentName", {
    repoId: "text",
    kind: "text",
    name: "text",
    intentId: "text",
  }),
  Claim: table<M.Claim>("Claim", { intentId: "text", repoId: "text", paths: "text", updatedAt: "date" }),
  ClaimWait: table<M.ClaimWait>("ClaimWait", {
    id: "text",
    repoId: "text",
    intentId: "text",
    paths: "text",
    createdAt: "date",
  }),
  Notice: table<M.Notice>("Notice", {
    id: "text",
    repoId: "text",
    intentId: "text",
    sessionId: "text",
    kind: "text",
    paths: "text",
    peer: "text",
    note: "text",
    reason: "text",
    queueLength: "int",
    waitedMs: "int",
    text: "text",
    createdAt: "date",
    toldAt: "date",
    packetId: "text",
  }),
  ReleaseAsk: table<M.ReleaseAsk>("ReleaseAsk", {
    id: "text",
    repoId: "text",
    fromIntentId: "text",
    toIntentId: "text",
    paths: "text",
    note: "text",
    createdAt: "date",
    honouredAt: "date",
    closedAt: "date",
  }),
  Checkpoint: table<M.Checkpoint>("Checkpoint", {
    id: "text",
    intentId: "text",
    status: "text",
    summary: "text",
    paths: "text",
    source: "text",
    createdAt: "date",
  }),
  Event: table<M.Event>("Event", {
    seq: "int",
    repoId: "text",
    intentId: "text",
    kind: "text",
    peerIds: "text",
    summary: "text",
    createdAt: "date",
  }),
  Decision: table<M.Decision>("Decision", {
    id: "text",
    repoId: "text",
    intentId: "text",
    action: "text",
    peerIds: "text",
    reason: "text",
    createdAt: "date",
  }),
  Packet: table<M.Packet>("Packet", {
    id: "text",
    repoId: "text",
    intentId: "text",
    sessionId: "text",
    kind: "text",
    action: "text",
    cursor: "int",
    chars: "int",
    tokens: "int",
    peerIds: "text",
    ackedChars: "int",
    ackedAt: "date",
    createdAt: "date",
  }),
  Command: table<M.Command>("Command", {
    id: "text",
    repoId: "text",
    sessionId: "text",
    kind: "text",
    actor: "text",
    reason: "text",
    createdAt: "date",
  }),
  GuardCatch: table<M.GuardCatch>("GuardCatch", {
    id: "text",
    repoId: "text",
    intentId: "text",
    agentId: "text",
    kind: "text",
    paths: "text",
    peerIds: "text",
    detail: "text",
    createdAt: "date",
  }),
  AgentRequest: table<M.AgentRequest>("AgentRequest", {
    tokenId: "text",
    key: "text",
    bodyHash: "text",
    outcome: "text",
    createdAt: "date",
  }),
  WiringReport: table<M.WiringReport>("WiringReport", {
    id: "text",
    repoId: "text",
    tokenId: "text",
    checkout: "text",
    sessionId: "text",
    changes: "text",
    reportedAt: "date",
    clearedAt: "date",
  }),
  ConsoleSession: table<M.ConsoleSession>("ConsoleSession", {
    id: "text",
    tokenHash: "text",
    csrfToken: "text",
    person: "text",
    provider: "text",
    githubToken: "text",
    createdAt: "date",
    expiresAt: "date",
    lastSeenAt: "date",
  }),
  LoginLink: table<M.LoginLink>("LoginLink", {
    id: "text",
    tokenHash: "text",
    createdAt: "date",
    expiresAt: "date",
    usedAt: "date",
  }),
  Pairing: table<M.Pairing>("Pairing", {
    id: "text",
    repoName: "text",
    machine: "text",
    user: "text",
    client: "text",
    userCode: "text",
    deviceCodeHash: "text",
    status: "text",
    interval: "int",
    approvedBy: "text",
    person: "text",
    tokenId: "text",
    lastPolledAt: "date",
    createdAt: "date",
    updatedAt: "date",
    expiresAt: "date",
    decidedAt: "date",
  }),
};
export type { M as Models };
