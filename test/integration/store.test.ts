import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb, migrate, type Db } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * Nothing accepted is ever lost: a write outside a transaction is never swept
 * into another caller's rollback. On SQLite every write of the store shares
 * one connection; a plain write waits for the open transaction's turn and
 * commits on its own, and this test holds the store to that.
 */
describe.each(DATABASE_KINDS)("store (%s)", (kind) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("a plain write made while another transaction is open survives that transaction's rollback", async () => {
    const at = db.read.time(new Date());
    const add = `INSERT INTO "Repository" ("id", "name", "createdAt") VALUES (?, ?, ?)`;
    await db.read.run(add, "rep_plain", "acme/plain", at);
    let inside!: () => void;
    const opened = new Promise<void>((r) => (inside = r));
    const failing = db.tx(async (x) => {
      await x.run(add, "rep_rolled", "acme/rolled", at);
      inside();
      await new Promise((r) => setTimeout(r, 100));
      throw new Error("roll back");
    });
    await opened;
    // A single-statement write outside any transaction: it commits on its own.
    const plain = db.read.run(`UPDATE "Repository" SET "goal" = 'kept' WHERE "id" = 'rep_plain'`);
    await expect(failing).rejects.toThrow("roll back");
    await plain;
    const rows = (await db.read.all(`SELECT "name", "goal" FROM "Repository" ORDER BY "name"`)).map((r) => [
      r.name,
      r.goal,
    ]);
    expect(rows).toEqual([["acme/plain", "kept"]]);
  });
});
