import { copyFileSync, existsSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, openDb, type Db } from "@cohent/backend";
import { startWalCheckpointer } from "../../backend/src/store/wal-checkpointer.js";
import { freshDatabaseUrl } from "../helpers/backend.js";

/**
 * The server's SQLite log is checkpointed by a worker thread (store/wal-checkpointer), off the
 * request path. What is in the database file itself, without its log, shows whether it ran: a
 * copy of the file alone holds only what was checkpointed.
 */
describe("WAL checkpointer (sqlite)", () => {
  let db: Db | null = null;
  let drop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await db?.close();
    await drop?.();
    db = null;
  });

  /** Rows of Repository in the database file alone (its log left out). */
  const inFile = (file: string) => {
    copyFileSync(file, `${file}.copy`);
    const copy = new Database(`${file}.copy`, { readonly: true });
    try {
      return (copy.prepare(`SELECT count(*) AS n FROM "Repository"`).get() as { n: number }).n;
    } finally {
      copy.close();
    }
  };

  async function writeRepos(walCheckpointer: boolean) {
    const fresh = await freshDatabaseUrl("sqlite");
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url, { walCheckpointer });
    for (let i = 0; i < 20; i++)
      await db.tx((x) =>
        x.run(
          `INSERT INTO "Repository" ("id", "name", "createdAt") VALUES (?, ?, ?)`,
          `rep_${i}`,
          `acme/r${i}`,
          x.time(new Date()),
        ),
      );
    return fresh.url.replace(/^file:/, "");
  }

  it("copies committed writes into the database file within its interval", async () => {
    const file = await writeRepos(true);
    let n = inFile(file);
    for (let i = 0; i < 40 && n < 20; i++) {
      await new Promise((r) => setTimeout(r, 50));
      n = inFile(file);
    }
    expect(n).toBe(20);
    expect(existsSync(`${file}-wal`)).toBe(true);
  });

  it("without it, a short log stays in the log (the control: the test above can fail)", async () => {
    const file = await writeRepos(false);
    await new Promise((r) => setTimeout(r, 600));
    expect(inFile(file)).toBe(0);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
  });

  it("stops with the database: close returns, and a write after reopening is checkpointed again", async () => {
    const file = await writeRepos(true);
    await db!.close();
    db = await openDb(`file:${file}`, { walCheckpointer: true });
    await db.tx((x) =>
      x.run(
        `INSERT INTO "Repository" ("id", "name", "createdAt") VALUES (?, ?, ?)`,
        "rep_again",
        "acme/again",
        x.time(new Date()),
      ),
    );
    let n = 0;
    for (let i = 0; i < 40 && n < 21; i++) {
      await new Promise((r) => setTimeout(r, 50));
      n = inFile(file);
    }
    expect(n).toBe(21);
  });

  it("a worker that cannot open the database reports why", async () => {
    const failed = new Promise<Error>((resolve) => {
      const c = startWalCheckpointer("/nonexistent/cohent/db.sqlite", resolve);
      expect(c).not.toBeNull();
    });
    expect((await failed).message).toMatch(/unable to open|directory does not exist/i);
  });
});
