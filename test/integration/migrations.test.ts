import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { migrate, openDb } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const PRISMA = "node_modules/prisma/build/index.js";
function prisma(provider: string, args: string[], databaseUrl: string) {
  return spawnSync(process.execPath, [PRISMA, ...args, "--config", `prisma/${provider}.config.ts`], {
    encoding: "utf8",
    env: { ...process.env, DATABASE_URL: databaseUrl, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    timeout: 120_000,
  });
}

/** The committed migrations are the model set, and the server's own applier keeps Prisma's bookkeeping. */
describe.each(DATABASE_KINDS)("migrations (%s)", (kind) => {
  const provider = kind === "postgres" ? "postgres" : "sqlite";

  // On PostgreSQL the diff replays the migrations into a shadow database of prisma/postgres.config.ts's
  // own making (the built-in one would reuse the main database), through the adapter patched for
  // prisma/orm#27403.
  it("the committed migrations produce exactly the shared model set", { timeout: 120_000 }, async () => {
    const db = await freshDatabaseUrl(kind);
    try {
      const diff = prisma(
        provider,
        [
          "migrate",
          "diff",
          "--from-migrations",
          `prisma/${provider}/migrations`,
          "--to-schema-datamodel",
          `prisma/${provider}`,
          "--exit-code",
        ],
        db.url,
      );
      expect(diff.status, diff.stdout + diff.stderr).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it("every model reads back every field from a freshly migrated database", async () => {
    const db = await freshDatabaseUrl(kind);
    try {
      await migrate(db.url);
      const store = await openDb(db.url);
      try {
        const models = Object.keys(store.prisma).filter(
          (k) => typeof (store.prisma as any)[k]?.findFirst === "function",
        );
        expect(models.length).toBeGreaterThanOrEqual(10);
        for (const model of models)
          await expect((store.prisma as any)[model].findFirst(), model).resolves.toBeNull();
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });

  it("applies once, is idempotent, and `prisma migrate status` agrees", async () => {
    const db = await freshDatabaseUrl(kind);
    try {
      const first = await migrate(db.url);
      expect(first.length).toBeGreaterThan(0);
      expect(await migrate(db.url)).toEqual([]);
      const status = prisma(provider, ["migrate", "status"], db.url);
      expect(status.stdout + status.stderr).toContain("Database schema is up to date");
      expect(status.status).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
