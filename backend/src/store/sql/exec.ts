import type Database from "better-sqlite3";
import pg from "pg";

/**
 * The store's one SQL layer: every store method runs its statements through
 * an Exec on the connection of its handle (a transaction's, or the read
 * connection outside any). Cached better-sqlite3 statements on SQLite, named
 * prepared statements on PostgreSQL, pipelined inside a transaction. The
 * schema and its migrations stay Prisma's; the encodings are Prisma's
 * (SQLite: DateTime as ISO text with "+00:00", booleans as 0 or 1;
 * PostgreSQL: timestamp(3) without time zone, in UTC).
 */
export const sqliteTime = (d: Date) => d.toISOString().replace("Z", "+00:00");

export type Row = Record<string, unknown>;
export type Dialect = "sqlite" | "postgres";

/** Runs one statement (`?` placeholders) on the transaction's connection. */
export interface Exec {
  dialect: Dialect;
  time(d: Date): unknown;
  get(sql: string, ...args: unknown[]): Promise<Row | undefined>;
  all(sql: string, ...args: unknown[]): Promise<Row[]>;
  /** The number of rows changed. */
  run(sql: string, ...args: unknown[]): Promise<number>;
  /**
   * A write whose answer the caller does not need. Inside a PostgreSQL
   * transaction it is sent without waiting (the client pipelines it behind
   * the statements before it) and `settle` reports its failure; elsewhere it
   * runs as `run` does. `changed`: the rows it must change, else it fails.
   */
  later(sql: string, args: unknown[], changed?: number): Promise<void>;
  /**
   * A statement whose answer is needed later, if at all: sent like `later`
   * (its failure reported by `settle` even when `row` is never awaited), and
   * `row` is its first row. On SQLite it has run, or thrown, on return.
   */
  ahead(sql: string, args: unknown[]): { row: Promise<Row | undefined> };
}

/**
 * A statement that returns rows reads them as arrays (better-sqlite3's raw mode) and builds each
 * row with a constructor compiled for its columns: an object literal of one shape. Its own row
 * objects, one property at a time, cost nearly twice as much (200 active intents of 22 columns:
 * 3.0 ms against 1.7 ms), and every full poll reads those.
 */
interface Prepared {
  s: Database.Statement;
  row: ((a: unknown[]) => Row) | null;
}

function rowMaker(s: Database.Statement): (a: unknown[]) => Row {
  const names = s.columns().map((c) => c.name);
  // The names are the statement's own columns (the store's SQL), quoted as JSON: a literal of them.
  return new Function("a", `return {${names.map((n, i) => `${JSON.stringify(n)}:a[${i}]`).join(",")}};`) as (
    a: unknown[],
  ) => Row;
}

export function sqliteExec(conn: Database.Database): Exec {
  const cache = new Map<string, Prepared>();
  // Prisma's connection returns integers as BigInt (defaultSafeIntegers); these statements want numbers.
  const st = (sql: string) => {
    let p = cache.get(sql);
    if (!p) {
      const s = conn.prepare(sql).safeIntegers(false);
      p = s.reader ? { s: s.raw(true), row: rowMaker(s) } : { s, row: null };
      cache.set(sql, p);
    }
    return p;
  };
  const get = (sql: string, args: unknown[]): Row | undefined => {
    const p = st(sql);
    if (!p.row) return p.s.get(...args) as Row | undefined;
    const a = p.s.get(...args) as unknown[] | undefined;
    return a === undefined ? undefined : p.row(a);
  };
  const all = (sql: string, args: unknown[]): Row[] => {
    const p = st(sql);
    if (!p.row) return p.s.all(...args) as Row[];
    return (p.s.all(...args) as unknown[][]).map(p.row);
  };
  return {
    dialect: "sqlite",
    time: sqliteTime,
    get: async (sql, ...args) => get(sql, args),
    all: async (sql, ...args) => all(sql, args),
    run: async (sql, ...args) => st(sql).s.run(...args).changes,
    later: async (sql, args, changed) => expect(sql, st(sql).s.run(...args).changes, changed),
    ahead: (sql, args) => ({ row: Promise.resolve(get(sql, args)) }),
  };
}

const expected = (sql: string, want: number, got: number) =>
  new Error(`${got} rows changed where ${want} should have: ${sql.slice(0, 60)}`);
const expect = (sql: string, got: number, want: number | undefined) => {
  if (want !== undefined && got !== want) throw expected(sql, want, got);
};

/** An Exec that counts the statements it ran: a test proves a read path runs none while nothing changed. */
export function counting(x: Exec): Exec & { readonly count: number } {
  let count = 0;
  return {
    dialect: x.dialect,
    time: x.time,
    get count() {
      return count;
    },
    get: (sql, ...args) => (count++, x.get(sql, ...args)),
    all: (sql, ...args) => (count++, x.all(sql, ...args)),
    run: (sql, ...args) => (count++, x.run(sql, ...args)),
    later: (sql, args, changed) => (count++, x.later(sql, args, changed)),
    ahead: (sql, args) => (count++, x.ahead(sql, args)),
  };
}

// timestamp(3) without time zone holds UTC (Prisma's encoding); pg would read it as local time.
const UTC_TIMESTAMP = 1114;
const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === UTC_TIMESTAMP
      ? (text: string) => new Date(`${text.replace(" ", "T")}Z`)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
const pgNames = new Map<string, { name: string; text: string }>();
/** Named once per distinct statement: pg prepares it once per connection. */
const pgStatement = (sql: string) => {
  let s = pgNames.get(sql);
  if (!s) {
    let n = 0;
    pgNames.set(sql, (s = { name: `cohent_${pgNames.size}`, text: sql.replace(/\?/g, () => `$${++n}`) }));
  }
  return s;
};

/**
 * The writes a transaction's client has sent without waiting (Exec `later`),
 * until `settle`. The client pipelines (store/db), so a member of a batch
 * pays one round trip for each answer it waits for, not one per statement.
 */
interface InFlight {
  /** In the order sent, each one's failure (or undefined): after the first, the transaction is aborted. */
  sent: Promise<unknown>[];
}
const inFlight = new WeakMap<pg.PoolClient, InFlight>();
const firstFailure = async (sent: Promise<unknown>[]) =>
  (await Promise.all(sent)).find((e) => e !== undefined);

/** Waits for the writes sent without waiting on `client`; throws the first failure among them. */
export async function settle(client: pg.PoolClient): Promise<void> {
  const f = inFlight.get(client);
  if (!f) return;
  inFlight.delete(client);
  const failed = await firstFailure(f.sent);
  if (failed !== undefined) throw failed;
}

/** Sends `sql` on a transaction's client without waiting for its answer (SAVEPOINT and the like, store/batch). */
export function sendLater(client: pg.PoolClient, sql: string, args?: unknown[]): void {
  track(client, client.query(args ? { ...pgStatement(sql), values: args, types: pgTypes } : sql));
}

function track<T>(client: pg.PoolClient, p: Promise<T>): Promise<T> {
  let f = inFlight.get(client);
  if (!f) inFlight.set(client, (f = { sent: [] }));
  f.sent.push(
    p.then(
      () => undefined,
      (e: unknown) => e ?? new Error("a statement failed"),
    ),
  );
  return p;
}

/** A transaction's client, or (outside any transaction) the pool: each statement on whichever client is free. */
export function pgExec(client: pg.PoolClient | pg.Pool): Exec {
  const inTx = !(client instanceof pg.Pool);
  const send = (sql: string, args: unknown[]) =>
    client.query({ ...pgStatement(sql), values: args, types: pgTypes });
  // A statement behind a failed one sent without waiting fails only because the transaction is
  // aborted: report the cause (the first failure among those sent before it).
  const query = !inTx
    ? send
    : async (sql: string, args: unknown[]) => {
        const f = inFlight.get(client as pg.PoolClient);
        const before = f?.sent.length ?? 0;
        try {
          return await send(sql, args);
        } catch (e) {
          throw (f && (await firstFailure(f.sent.slice(0, before)))) ?? e;
        }
      };
  return {
    dialect: "postgres",
    time: (d) => d.toISOString(),
    get: async (sql, ...args) => (await query(sql, args)).rows[0] as Row | undefined,
    all: async (sql, ...args) => (await query(sql, args)).rows as Row[],
    run: async (sql, ...args) => (await query(sql, args)).rowCount ?? 0,
    later: async (sql, args, changed) => {
      if (!inTx) return expect(sql, (await send(sql, args)).rowCount ?? 0, changed);
      // Checked by the server, not here: a failed check aborts the transaction as any failed write does,
      // so COMMIT can be sent behind the writes without waiting for their answers (store/db pgTx).
      const sent =
        changed === undefined
          ? send(sql, args)
          : send(
              // The count in the error's text: a cast that fails only when the count is not `changed`.
              `WITH w AS (${sql} RETURNING 1) SELECT CASE WHEN COUNT(*) = ${changed} THEN 0 ELSE CAST(COUNT(*) || ' rows changed' AS int) END FROM w`,
              args,
            ).catch((e: unknown) => {
              const got = /"(\d+) rows changed"/.exec((e as Error).message)?.[1];
              throw got === undefined ? e : expected(sql, changed, Number(got));
            });
      void track(client, sent).catch(() => {});
    },
    ahead: (sql, args) => {
      const row = (inTx ? track(client, send(sql, args)) : send(sql, args)).then(
        (r) => r.rows[0] as Row | undefined,
      );
      row.catch(() => {}); // awaiting `row` is optional: its failure reaches `settle` (or the pool caller) anyway
      return { row };
    },
  };
}

/** A list parameter: a JSON array on SQLite (json_each), an array on PostgreSQL. */
export const inListSql = (dialect: Dialect, column: string) =>
  dialect === "sqlite" ? `${column} IN (SELECT "value" FROM json_each(?))` : `${column} = ANY(?::text[])`;
export const listParam = (dialect: Dialect, names: string[]) =>
  dialect === "sqlite" ? JSON.stringify(names) : names;
