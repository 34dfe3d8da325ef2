import path from "node:path";
import { mkdirSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import { PrismaClient as PostgresClient } from "../generated/postgres/client.js";
import { CHANNEL, createChanges, type ChangeSource, type Changes } from "./changes.js";

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
  /** SQLite only: the connection Prisma's transactions run on (null before Prisma connects), for prepared statements inside them. */
  connection(): Database.Database | null;
  /** Raw access for the store, migrations and tests; operations go through the Store. */
  tx<T>(fn: (tx: PrismaTx) => Promise<T>): Promise<T>;
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

/** Prisma's own better-sqlite3 connection, captured when Prisma connects: its data_version changes only on other connections' commits. */
class CapturingSqlite extends PrismaBetterSQLite3 {
  connection: Database.Database | null = null;
  override async connect() {
    const adapter = await super.connect();
    this.connection = (adapter as unknown as { client: Database.Database }).client;
    return adapter;
  }
}

function sqliteSide(file: string): Database.Database {
  const side = new Database(file, { timeout: 10_000 });
  side.pragma("journal_mode = WAL");
  side.pragma("synchronous = NORMAL");
  side.pragma("foreign_keys = ON");
  return side;
}

function pgSource(url: string, prisma: Prisma): ChangeSource {
  return {
    latestSeq: async (repoId) =>
      (await prisma.event.findFirst({ where: { repoId }, orderBy: { seq: "desc" }, select: { seq: true } }))
        ?.seq ?? 0,
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

export async function openDb(url: string): Promise<Db> {
  const provider = providerOf(url);
  let prisma: Prisma;
  let side: Database.Database | null = null;
  let source: ChangeSource;
  let connection = (): Database.Database | null => null;
  if (provider === "sqlite") {
    const file = sqlitePath(url);
    mkdirSync(path.dirname(file), { recursive: true });
    const factory = new CapturingSqlite({ url: file, timeout: 10_000 });
    prisma = new SqliteClient({ adapter: factory });
    // WAL lets the admin CLI write while the server runs; foreign keys are off by default in SQLite.
    await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await prisma.$executeRawUnsafe("PRAGMA foreign_keys = ON");
    await prisma.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
    connection = () => (factory.connection?.open ? factory.connection : null);
    const s = (side = sqliteSide(file));
    const latest = s.prepare<[string], { seq: number | null }>(
      `SELECT MAX("seq") AS seq FROM "Event" WHERE "repoId" = ?`,
    );
    let version: unknown = null;
    source = {
      latestSeq: async (repoId) => Number(latest.get(repoId)?.seq ?? 0),
      probe: () => {
        const c = factory.connection;
        if (!c?.open) return true;
        const now = c.pragma("data_version", { simple: true });
        const changed = now !== version;
        version = now;
        return changed;
      },
    };
  } else {
    const client = new PostgresClient({ adapter: new PrismaPg({ connectionString: url, max: 10 }) });
    prisma = client as unknown as Prisma;
    source = pgSource(url, prisma);
  }
  const changes = await createChanges(source);
  return {
    provider,
    url,
    prisma,
    changes,
    side,
    connection: () => connection(),
    tx: (fn) => prisma.$transaction(fn, TX_OPTIONS),
    close: async () => {
      await changes.close();
      side?.close();
      await prisma.$disconnect();
    },
  };
}
