import path from "node:path";
import { mkdirSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import { PrismaClient as PostgresClient } from "../generated/postgres/client.js";
import { PgJoins, SqliteTurns, type Adapter } from "./adapters.js";
import { CHANNEL, createChanges, type ChangeSource, type Changes } from "./changes.js";
import { counting, pgExec, settle, sqliteExec, type Exec } from "./fast.js";
import { lazyPrisma, type Raw } from "./shell.js";
import { BACKSTOP_PAGES, startWalCheckpointer, type WalCheckpointer } from "./wal-checkpointer.js";

/**
 * The two generated clients share one model set, so one type serves both.
 * (One client cannot serve both providers: each is generated per provider.)
 */
export type Prisma = SqliteClient;
export type PrismaTx = Parameters<Parameters<Prisma["$transaction"]>[0]>[0];
export type Provider = "sqlite" | "postgres";

export interface Db {
  provider: Provider;
  url: string;
  prisma: Prisma;
  /** Change hints and the per-repository high-water cursor (store/changes). */
  changes: Changes;
  /**
   * SQLite only: a second connection of this process (WAL), for the hot
   * path's prepared statements. It sees only committed data, never the
   * inside of a transaction Prisma holds open on its own connection.
   */
  side: Database.Database | null;
  /**
   * Prepared statements outside any transaction (store/outside): on SQLite
   * the side connection, on PostgreSQL a pool of its own. `count`: statements run.
   */
  read: Exec & { readonly count: number };
  /** SQLite only: the connection Prisma's transactions run on (null before Prisma connects), for prepared statements inside them. */
  connection(): Database.Database | null;
  /**
   * One transaction on the driver's own connection (SQLite: BEGIN IMMEDIATE
   * under the connection's turn; PostgreSQL: a pool client, BEGIN … COMMIT).
   * `raw` is that connection, for prepared statements; `tx` is a Prisma
   * handle on the same transaction, opened only when first used. Raw access
   * for the store, migrations and tests; operations go through the Store.
   * Inside, use `tx` or `raw`, never `prisma` (on SQLite it waits for this
   * transaction's end).
   */
  tx<T>(fn: (tx: PrismaTx, raw: Raw) => Promise<T>): Promise<T>;
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

const TX_OPTIONS = { maxWait: 20_000, timeout: 20_000 } as const;
/** How long a write waits for another process's SQLite write lock. */
const BUSY_MS = 10_000;

/** Prisma's own better-sqlite3 connection, captured when Prisma connects (its data_version changes only on other connections' commits), and taken in turns (store/adapters). */
class CapturingSqlite extends PrismaBetterSQLite3 {
  connection: Database.Database | null = null;
  constructor(
    config: ConstructorParameters<typeof PrismaBetterSQLite3>[0],
    readonly turns: SqliteTurns,
  ) {
    super(config);
  }
  override async connect() {
    const adapter = await super.connect();
    this.connection = (adapter as unknown as { client: Database.Database }).client;
    return this.turns.wrap(adapter as unknown as Adapter, this.connection) as unknown as typeof adapter;
  }
}

/** Prisma's PostgreSQL adapter over the store's pool, whose transactions can join the store's (store/adapters). */
class JoinablePg extends PrismaPg {
  constructor(
    pool: pg.Pool,
    readonly joins: PgJoins,
  ) {
    super(pool);
  }
  override async connect() {
    return this.joins.wrap((await super.connect()) as unknown as Adapter) as unknown as Awaited<
      ReturnType<PrismaPg["connect"]>
    >;
  }
}

function sqliteSide(file: string): Database.Database {
  const side = new Database(file, { timeout: 10_000 });
  side.pragma("journal_mode = WAL");
  side.pragma("synchronous = NORMAL");
  side.pragma("foreign_keys = ON");
  return side;
}

function pgSource(url: string, read: Exec): ChangeSource {
  return {
    latestSeq: async (repoId) =>
      Number(
        (await read.get(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`, repoId))?.seq ?? 0,
      ),
    listen: async (hint, lost) => {
      let client: pg.Client | null = null;
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      const connect = async () => {
        if (stopped) return;
        const c = new pg.Client({ connectionString: url });
        const drop = () => {
          if (client !== c) return;
          client = null;
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
}

export async function openDb(url: string, opts: OpenOptions = {}): Promise<Db> {
  const provider = providerOf(url);
  let prisma: Prisma;
  let side: Database.Database | null = null;
  let source: ChangeSource;
  let connection = (): Database.Database | null => null;
  let read: Exec;
  let tx: Db["tx"];
  let end = async () => {};
  let checkpointer: WalCheckpointer | null = null;
  if (provider === "sqlite") {
    const file = sqlitePath(url);
    mkdirSync(path.dirname(file), { recursive: true });
    const turns = new SqliteTurns(BUSY_MS);
    const factory = new CapturingSqlite({ url: file, timeout: BUSY_MS }, turns);
    prisma = new SqliteClient({ adapter: factory });
    // WAL lets the admin CLI write while the server runs; foreign keys are off by default in SQLite.
    await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await prisma.$executeRawUnsafe("PRAGMA foreign_keys = ON");
    await prisma.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
    checkpointer = opts.walCheckpointer ? startWalCheckpointer(file, opts.onWalCheckpointerError) : null;
    if (checkpointer) await prisma.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    connection = () => (factory.connection?.open ? factory.connection : null);
    tx = sqliteTx(prisma, turns, connection);
    const s = (side = sqliteSide(file));
    read = sqliteExec(s);
    const latest = s.prepare<[string], { seq: number | null }>(
      `SELECT MAX("seq") AS seq FROM "Event" WHERE "repoId" = ?`,
    );
    let version: unknown = null;
    // Prepared once per connection: `pragma()` prepares a statement on every call (store/changes probes once per turn).
    let probing: { conn: Database.Database; st: Database.Statement } | null = null;
    source = {
      latestSeq: async (repoId) => Number(latest.get(repoId)?.seq ?? 0),
      probe: () => {
        const c = factory.connection;
        if (!c?.open) return true;
        if (probing?.conn !== c) probing = { conn: c, st: c.prepare("PRAGMA data_version").pluck() };
        const now = probing.st.get();
        const changed = now !== version;
        version = now;
        return changed;
      },
    };
  } else {
    // Pipelined: the writes a transaction sends without waiting (store/fast `later`) share round trips.
    const pool = new pg.Pool({ connectionString: url, max: 10, pipeline: true } as pg.PoolConfig);
    pool.on("error", () => {}); // an idle client lost: the pool replaces it
    const joins = new PgJoins();
    const client = new PostgresClient({ adapter: new JoinablePg(pool, joins) });
    prisma = client as unknown as Prisma;
    // Reads outside a transaction get their own clients: a write waiting for a repository's row lock
    // holds its client, and 200 agents' kill-switch reads must not queue behind those.
    const reads = new pg.Pool({ connectionString: url, max: 10 });
    reads.on("error", () => {});
    read = pgExec(reads);
    tx = pgTx(prisma, pool, joins);
    source = pgSource(url, read);
    end = async () => {
      await pool.end();
      await reads.end();
    };
  }
  const changes = await createChanges(source);
  return {
    provider,
    url,
    prisma,
    changes,
    side,
    read: counting(read),
    connection: () => connection(),
    tx,
    close: async () => {
      await changes.close();
      side?.close();
      await prisma.$disconnect();
      await checkpointer?.stop();
      await end();
    },
  };
}

/** SQLite: the connection's turn, BEGIN IMMEDIATE, the work, COMMIT (or ROLLBACK). */
function sqliteTx(prisma: Prisma, turns: SqliteTurns, connection: () => Database.Database | null): Db["tx"] {
  return async (fn) => {
    if (!connection()) await prisma.$connect();
    await turns.gate.acquire();
    const conn = connection();
    let shell: ReturnType<typeof lazyPrisma> | null = null;
    try {
      if (!conn) throw new Error("SQLITE_CANTOPEN: the database connection is closed");
      await turns.begin(conn);
      const raw = { sqlite: conn };
      shell = lazyPrisma(
        prisma,
        raw,
        async (open) => {
          turns.joining = true;
          try {
            await open();
          } finally {
            turns.joining = false;
          }
        },
        TX_OPTIONS,
      );
      const out = await fn(shell.client, raw);
      await shell.close();
      turns.end(conn, "COMMIT");
      return out;
    } catch (e) {
      await shell?.close();
      if (conn?.open) turns.end(conn, "ROLLBACK");
      throw e;
    } finally {
      turns.gate.release();
    }
  };
}

/** PostgreSQL: a pool client, BEGIN, the work, COMMIT (or ROLLBACK); a client whose rollback fails is dropped. */
function pgTx(prisma: Prisma, pool: pg.Pool, joins: PgJoins): Db["tx"] {
  return async (fn) => {
    const client = await pool.connect();
    const lost = () => {}; // a checked-out client's error surfaces as its query's rejection
    client.on("error", lost);
    let broken = false;
    let shell: ReturnType<typeof lazyPrisma> | null = null;
    try {
      await client.query("BEGIN");
      const raw = { pg: client };
      shell = lazyPrisma(
        prisma,
        raw,
        (open) =>
          joins.starting.run(async () => {
            joins.joining = client;
            try {
              await open();
            } finally {
              joins.joining = null;
            }
          }),
        TX_OPTIONS,
      );
      const out = await fn(shell.client, raw);
      await shell.close();
      // COMMIT in an aborted transaction answers ROLLBACK, not an error: every write must have succeeded first.
      await settle(client);
      await client.query("COMMIT");
      return out;
    } catch (e) {
      await shell?.close();
      await settle(client).catch(() => {});
      await client.query("ROLLBACK").catch(() => (broken = true));
      throw e;
    } finally {
      client.removeListener("error", lost);
      client.release(broken);
    }
  };
}
