import { spawnSync } from "node:child_process";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COHENT_VERSION, compareVersions, MIN_ADAPTER_VERSION } from "@cohent/protocol";
import { migrate } from "@cohent/backend";
import { freshDatabaseUrl, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/** Upgrades, server side: every envelope names the server's version, and an older server refuses a newer database. */

const FUTURE = "29990101000000_from_a_newer_cohent";

async function addFutureMigration(url: string): Promise<void> {
  const sql = `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count, started_at) VALUES ('future-1', 'x', CURRENT_TIMESTAMP, '${FUTURE}', 1, CURRENT_TIMESTAMP)`;
  if (url.startsWith("file:")) {
    const db = new Database(url.replace(/^file:/, ""));
    db.exec(sql);
    db.close();
  } else {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(sql);
    await client.end();
  }
}

describe.each(DATABASE_KINDS)("a database migrated by a newer version (%s)", (kind) => {
  it("migrate refuses it with DATABASE_TOO_NEW, naming the unknown migration and what to do", async () => {
    const db = await freshDatabaseUrl(kind);
    try {
      await migrate(db.url);
      await expect(migrate(db.url)).resolves.toEqual([]);
      await addFutureMigration(db.url);
      const err = await migrate(db.url).then(
        () => null,
        (e: unknown) => e as { code: string; message: string; details: unknown },
      );
      expect(err?.code).toBe("DATABASE_TOO_NEW");
      expect(err?.message).toContain(FUTURE);
      expect(err?.message).toContain(COHENT_VERSION);
      expect(err?.message).toMatch(/npm install -g --allow-scripts=better-sqlite3 cohent@latest/);
      expect(err?.details).toEqual({ migrations: [FUTURE], version: COHENT_VERSION });
    } finally {
      await db.drop();
    }
  });
});

it("`cohent serve` on such a database exits 1 with the code and message, and serves nothing", async () => {
  const db = await freshDatabaseUrl("sqlite");
  try {
    await migrate(db.url);
    await addFutureMigration(db.url);
    const r = spawnSync(process.execPath, [path.resolve("cli/bin/cohent.mjs"), "serve", "--port", "0"], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db.url, COHENT_LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("cohent: DATABASE_TOO_NEW: This database was migrated by a newer Cohent");
    expect(r.stderr).not.toContain("cohent serving on");
  } finally {
    await db.drop();
  }
});

describe("envelope meta", () => {
  let backend: TestBackend;
  beforeAll(async () => {
    backend = await startBackend();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  it("every answer, success or failure, carries serverVersion and minAdapterVersion", async () => {
    const ok = await (await fetch(`${backend.url}/healthz`)).json();
    expect(ok.meta).toMatchObject({ serverVersion: COHENT_VERSION, minAdapterVersion: MIN_ADAPTER_VERSION });
    const failed = await (
      await fetch(`${backend.url}/api/agent`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
    ).json();
    expect(failed.ok).toBe(false);
    expect(failed.meta).toMatchObject({
      serverVersion: COHENT_VERSION,
      minAdapterVersion: MIN_ADAPTER_VERSION,
    });
    expect(compareVersions(MIN_ADAPTER_VERSION, COHENT_VERSION)).toBeLessThanOrEqual(0);
  });
});

it("compareVersions orders dotted versions numerically", () => {
  expect(compareVersions("0.10.0", "0.9.2")).toBeGreaterThan(0);
  expect(compareVersions("1.2.0", "1.2")).toBe(0);
  expect(compareVersions("1.2.3-beta.1", "1.2.3")).toBe(0);
  expect(compareVersions("0.1.0", "0.2.0")).toBeLessThan(0);
});
