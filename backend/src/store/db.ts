import path from "node:path";
import { mkdirSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import type { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import { CHANNEL, createChanges, type ChangeSource, type Changes } from "./changes.js";
import { Gate } from "./gate.js";
import type { Raw } from "./handle.js";
import { counting, pgExec, settle, sqliteExec, type Exec } from "./sql/exec.js";
import { sqliteBegin, sqliteWal } from "./sql/sqlite-busy.js";
import { BACKSTOP_PAGES, startWalCheckpointer, type WalCheckpointer } from "./wal-checkpointer.js";

export type Provider = "sqlite" | "postgres";
/** The two generated clients share one model set, so one type serves both. */
export type Prisma = SqliteClient;

/**
 * The store's connections. Prisma owns the schema and the migrations
 * (store/migrate applies its SQL); at run time every statement goes through
 * the store's own SQL layer (store/sql) on these connections.
 */
export interface Db {
  provider: Provider;
  url: string;
  /** Change hints and the per-repository high-water cursor (store/changes). */
  changes: Changes;
  /**
   * Statements outside any transaction. Reads go to the read connection (SQLite: a second
   * connection of this process, WAL, which sees what is committed and never waits for a
   * transaction's turn; PostgreSQL: a pool of its own, so reads never queue behind writes waiting
   * for a repository's row lock). A write commits on its own: on SQLite as a transaction of its
   * own on the write connection. `count`: statements run (a test proves a read path runs none).
   */
  read: Exec & { readonly count: number };
  /**
   * One transaction on the write connection (SQLite: the connection's turn, BEGIN IMMEDIATE;
   * PostgreSQL: a pool client, BEGIN … COMMIT). `x` runs its statements; `raw` is the connection,
   * for what the batch shares (store/batch). Operations go through the Store.
   */
  tx<T>(fn: (x: Exec, raw: Raw) => Promise<T>): Promise<T>;
  /**
   * A plain Prisma client on a connection of its own, opened on first use: for tests and tools that
   * inspect the database. The store never uses it (on SQLite, a write through it while a store
   * transaction is open waits for that transaction's lock).
   */
  readonly prisma: Prisma;
  close(): Promise<void>;
}

export function providerOf(url: string): Provider {
  if (/^postgres(ql)?:\/\//.test(url)) return "postgres";
  if (url.startsWith("file:")) return "sqlite";
  throw new Error(`DATABASE_URL must start with file: or postgres:// (got ${url.split(":")[0]}:…)`);
}

export function sqlitePath(url: string): string {
  return url.replace(/^file:/, "").replace(/\?.*$/, "");
}

/** How long a write waits for another process's SQLite write lock. */
export const BUSY_MS = 10_000;

async function sqliteConnection(file: string): Promise<Database.Database> {
  const conn = new Database(file, { timeout: BUSY_MS });
  // WAL lets the admin CLI write while the server runs; foreign keys are off by default in SQLite.
  await sqliteWal(conn, BUSY_MS);
  conn.pragma("synchronous = NORMAL");
  conn.pragma("foreign_keys = ON");
  // The savepoint journal (each member of a group commit is a savepoint, store/batch) and the
  // statement journals go to temporary files by default: a pwrite for every page a member first
  // changes, ~27 a publish (strace, 6 a batch). In memory instead: a publish's statements
  // 200-260 → 110-125 µs of CPU, the same statements replayed on a copy of the bench's database.
  conn.pragma("temp_store = MEMORY");
  return conn;
}

function pgSource(url: string, read: Exec): ChangeSource {
  let client: pg.Client | null = null;
  // The listener's connections lost so far, and as of the last `alive`: a loss in between may have lost hints.
  let drops = 0;
  let dropsSeen = 0;
  let pinging = false;
  return {
    alive: async () => {
      const c = client;
      const lostSince = drops !== dropsSeen;
      dropsSeen = drops;
      // A ping still unanswered (the caller's time limit passed) is doubt too: no second one behind it.
      if (!c || lostSince || pinging) return false;
      pinging = true;
      try {
        await c.query("SELECT 1");
        return client === c && drops === dropsSeen;
      } catch {
        return false;
      } finally {
        pinging = false;
      }
    },
    latestSeq: async (repoId) =>
      Number(
        (await read.get(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`, repoId))?.seq ?? 0,
      ),
    listen: async (hint, lost) => {
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      const connect = async () => {
        if (stopped) return;
        const c = new pg.Client({ connectionString: url });
        const drop = () => {
          if (client !== c) return;
          client = null;
          drops++;
          lost();
          c.end().catch(() => {});
          if (!stopped) retry = setTimeout(() => void connect(), 1_000).unref();
        };
        c.on("error", drop);
        c.on("end", drop);
        c.on("notification", (n) => n.channel === CHANNEL && hint(n.payload ?? ""));
        try {
          await c.connect();
          await c.query(`LISTEN ${CHANNEL}`);
          client = c;
          lost(); // anything committed while not listening
        } catch {
          c.end().catch(() => {});
          if (!stopped) retry = setTimeout(() => void connect(), 1_000).unref();
        }
      };
      await connect();
      return async () => {
        stopped = true;
        clearTimeout(retry);
        const c = client;
        client = null;
        await c?.end().catch(() => {});
      };
    },
  };
}

export interface OpenOptions {
  /** SQLite: checkpoint the log in a worker thread (store/wal-checkpointer); the server's choice, not a short command's. */
  walCheckpointer?: boolean;
  /** Told when that worker fails (the checkpoints then happen in the writes again). */
  onWalCheckpointerError?: (err: Error) => void;
  /**
   * Whether `prisma` is offered (the default). False skips loading Prisma's client and driver
   * adapter, which no store statement uses: a third of a short admin command's CPU (60 of 200 ms
   * compiled), paid by every `cohent repo add` and `token issue`.
   */
  inspect?: boolean;
}

/** The Prisma client of `provider`, loaded when asked for: it is for inspection only. */
async function prismaFactory(provider: Provider, url: string): Promise<() => Prisma> {
  if (provider === "sqlite") {
    const [{ PrismaBetterSQLite3 }, { PrismaClient }] = await Promise.all([
      import("@prisma/adapter-better-sqlite3"),
      import("../generated/sqlite/client.js"),
    ]);
    return () =>
      new PrismaClient({ adapter: new PrismaBetterSQLite3({ url: sqlitePath(url), timeout: BUSY_MS }) });
  }
  const [{ PrismaPg }, { PrismaClient }] = await Promise.all([
    import("@prisma/adapter-pg"),
    import("../generated/postgres/client.js"),
  ]);
  return () =>
    new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }) }) as unknown as Prisma;
}

/** Reads on `reads`; each write as a transaction of its own (`tx`). */
function readsAndWrites(reads: Exec, tx: Db["tx"]): Exec {
  return {
    dialect: reads.dialect,
    time: reads.time,
    get: reads.get,
    all: reads.all,
    run: (sql, ...args) => tx((x) => x.run(sql, ...args)),
    later: (sql, args, changed) => tx((x) => x.later(sql, args, changed)),
    ahead: (sql, args) => ({ row: tx((x) => x.ahead(sql, args).row) }),
  };
}

export async function openDb(url: string, opts: OpenOptions = {}): Promise<Db> {
  const provider = providerOf(url);
  let source: ChangeSource;
  let read: Exec;
  let tx: Db["tx"];
  let end: () => Promise<void>;
  if (provider === "sqlite") {
    const file = sqlitePath(url);
    mkdirSync(path.dirname(file), { recursive: true });
    const conn = await sqliteConnection(file);
    const checkpointer: WalCheckpointer | null = opts.walCheckpointer
      ? startWalCheckpointer(file, opts.onWalCheckpointerError)
      : null;
    if (checkpointer) conn.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    // Reads outside a transaction: a second connection, which sees what is committed.
    const side = await sqliteConnection(file);
    tx = sqliteTx(conn);
    read = readsAndWrites(sqliteExec(side), tx);
    const latest = side.prepare<[string], { seq: number | null }>(
      `SELECT MAX("seq") AS seq FROM "Event" WHERE "repoId" = ?`,
    );
    // data_version of the write connection moves when any other connection commits (the admin CLI,
    // another `cohent serve`): prepared once, probed once per turn (store/changes).
    const dataVersion = conn.prepare("PRAGMA data_version").pluck();
    let version: unknown = null;
    source = {
      latestSeq: async (repoId) => Number(latest.get(repoId)?.seq ?? 0),
      probe: () => {
        if (!conn.open) return true;
        const now = dataVersion.get();
        const changed = now !== version;
        version = now;
        return changed;
      },
    };
    end = async () => {
      side.close();
      conn.close();
      await checkpointer?.stop();
    };
  } else {
    // Pipelined: the writes a transaction sends without waiting (Exec `later`) share round trips.
    const pool = new pg.Pool({ connectionString: url, max: 10, pipeline: true } as pg.PoolConfig);
    pool.on("error", () => {}); // an idle client lost: the pool replaces it
    // Reads outside a transaction get their own clients: a write waiting for a repository's row lock
    // holds its client, and 200 agents' kill-switch reads must not queue behind those.
    const reads = new pg.Pool({ connectionString: url, max: 10 });
    reads.on("error", () => {});
    // A write outside a transaction commits on its own, on the read pool (the transactions' clients may all be waiting).
    read = pgExec(reads);
    tx = pgTx(pool);
    source = pgSource(url, read);
    end = async () => {
      await pool.end();
      await reads.end();
    };
  }
  const changes = await createChanges(source);
  const makePrisma = opts.inspect === false ? null : await prismaFactory(provider, url);
  let prisma: Prisma | null = null;
  return {
    provider,
    url,
    changes,
    read: counting(read),
    tx,
    get prisma() {
      if (!makePrisma) throw new Error("db.prisma: this database was opened with inspect: false");
      return (prisma ??= makePrisma());
    },
    close: async () => {
      await changes.close();
      await prisma?.$disconnect();
      await end();
    },
  };
}

/**
 * SQLite: one write connection, so one turn (a Gate): the connection's turn, BEGIN IMMEDIATE
 * (the write lock up front, so another process's lock is waited out for the busy timeout instead of
 * failing an upgrade at once), the work, COMMIT (or ROLLBACK).
 */
function sqliteTx(conn: Database.Database): Db["tx"] {
  const gate = new Gate();
  const begin = sqliteBegin(conn, BUSY_MS);
  const commit = conn.prepare("COMMIT");
  const rollback = conn.prepare("ROLLBACK");
  const x = sqliteExec(conn);
  return async (fn) => {
    await gate.acquire();
    try {
      if (!conn.open) throw new Error("SQLITE_CANTOPEN: the database connection is closed");
      await begin();
      try {
        const out = await fn(x, { sqlite: conn });
        commit.run();
        return out;
      } catch (e) {
        if (conn.open && conn.inTransaction) rollback.run();
        throw e;
      }
    } finally {
      gate.release();
    }
  };
}

/** PostgreSQL: a pool client, BEGIN, the work, COMMIT (or ROLLBACK); a client whose rollback fails is dropped. */
function pgTx(pool: pg.Pool): Db["tx"] {
  const execs = new WeakMap<pg.PoolClient, Exec>();
  return async (fn) => {
    const client = await pool.connect();
    const lost = () => {}; // a checked-out client's error surfaces as its query's rejection
    client.on("error", lost);
    let broken = false;
    let x = execs.get(client);
    if (!x) execs.set(client, (x = pgExec(client)));
    try {
      await client.query("BEGIN");
      const out = await fn(x, { pg: client });
      // Sent behind the writes still unanswered, sharing their round trip (under the repository's lock:
      // every round trip held it longer for every write behind). Each of their failures, row-count checks
      // included (store/sql/exec `later`), aborts the transaction, and COMMIT then answers ROLLBACK.
      const commit = client.query("COMMIT").then(
        (r) => r.command,
        (e: unknown) => ({ failed: e }),
      );
      await settle(client);
      const answer = await commit;
      if (typeof answer !== "string") throw answer.failed;
      if (answer !== "COMMIT") throw new Error(`the transaction was not committed (${answer})`);
      return out;
    } catch (e) {
      await settle(client).catch(() => {});
      await client.query("ROLLBACK").catch(() => (broken = true));
      throw e;
    } finally {
      client.removeListener("error", lost);
      client.release(broken);
    }
  };
}
