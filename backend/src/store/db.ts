import path from "node:path";
import { mkdirSync } from "node:fs";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import { PrismaClient as PostgresClient } from "../generated/postgres/client.js";

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

export async function openDb(url: string): Promise<Db> {
  const provider = providerOf(url);
  let prisma: Prisma;
  if (provider === "sqlite") {
    const file = sqlitePath(url);
    mkdirSync(path.dirname(file), { recursive: true });
    prisma = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: file, timeout: 10_000 }) });
    // WAL lets the admin CLI write while the server runs; foreign keys are off by default in SQLite.
    await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await prisma.$executeRawUnsafe("PRAGMA foreign_keys = ON");
    await prisma.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
  } else {
    const client = new PostgresClient({ adapter: new PrismaPg({ connectionString: url, max: 10 }) });
    prisma = client as unknown as Prisma;
  }
  return {
    provider,
    url,
    prisma,
    tx: (fn) => prisma.$transaction(fn, TX_OPTIONS),
    close: () => prisma.$disconnect(),
  };
}
