import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { CohentError } from "@cohent/protocol/codes";
import { COHENT_VERSION } from "@cohent/protocol/version";
import { shipped } from "../shipped.js";
import { sqliteWal } from "./sql/sqlite-busy.js";
import { BUSY_MS, providerOf, sqlitePath, type Provider } from "./db.js";

/**
 * Applies the committed Prisma migration SQL at start. It keeps Prisma's own
 * `_prisma_migrations` bookkeeping (same columns, same sha256 checksum), so
 * `prisma migrate status` agrees with it, without the CLI's start-up cost.
 */
const PRISMA_DIR = shipped("prisma");

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function migrationsFor(provider: Provider): Migration[] {
  const dir = path.join(PRISMA_DIR, provider, "migrations");
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;
const PG_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

function checkApplied(applied: Map<string, string>, migrations: Migration[]): Migration[] {
  // A migration this version does not ship means a newer Cohent migrated the database: refuse, rather than serve a schema it does not know.
  const unknown = [...applied.keys()].filter((name) => !migrations.some((m) => m.name === name)).sort();
  if (unknown.length > 0) {
    throw new CohentError(
      "DATABASE_TOO_NEW",
      `This database was migrated by a newer Cohent than ${COHENT_VERSION} (unknown migration ${unknown.join(", ")}). Upgrade cohent (npm install -g --allow-scripts=better-sqlite3 cohent@latest), or point --data-dir / DATABASE_URL at another database.`,
      { migrations: unknown, version: COHENT_VERSION },
    );
  }
  for (const [name, checksum] of applied) {
    const m = migrations.find((x) => x.name === name);
    if (m && m.checksum !== checksum) throw new Error(`migration ${name} was changed after it was applied`);
  }
  return migrations.filter((m) => !applied.has(m.name));
}

/** Returns the names of the migrations it applied. */
export async function migrate(url: string): Promise<string[]> {
  const provider = providerOf(url);
  const migrations = migrationsFor(provider);
  return provider === "sqlite" ? migrateSqlite(url, migrations) : migratePostgres(url, migrations);
}

async function migrateSqlite(url: string, migrations: Migration[]): Promise<string[]> {
  mkdirSync(path.dirname(sqlitePath(url)), { recursive: true });
  const db = new Database(sqlitePath(url), { timeout: BUSY_MS });
  try {
    await sqliteWal(db, BUSY_MS);
    db.exec(SQLITE_TABLE);
    // IMMEDIATE takes the write lock first, so two starting processes cannot both apply.
    return db
      .transaction(() => {
        const rows = db
          .prepare(
            `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`,
          )
          .all() as { migration_name: string; checksum: string }[];
        const pending = checkApplied(new Map(rows.map((r) => [r.migration_name, r.checksum])), migrations);
        for (const m of pending) {
          db.exec(m.sql);
          db.prepare(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count, started_at) VALUES (?, ?, ?, ?, 1, ?)`,
          ).run(randomUUID(), m.checksum, Date.now(), m.name, Date.now());
        }
        return pending.map((m) => m.name);
      })
      .immediate();
  } finally {
    db.close();
  }
}

async function migratePostgres(url: string, migrations: Migration[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Several stateless instances may start together: one applies, the others wait.
    await client.query("SELECT pg_advisory_lock(727274)");
    await client.query(PG_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`,
    );
    const pending = checkApplied(new Map(rows.map((r) => [r.migration_name, r.checksum])), migrations);
    for (const m of pending) {
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      }
    }
    return pending.map((m) => m.name);
  } finally {
    await client.query("SELECT pg_advisory_unlock(727274)").catch(() => {});
    await client.end();
  }
}
