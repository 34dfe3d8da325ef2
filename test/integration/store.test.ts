import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb, migrate, type Db } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * Nothing accepted is ever lost: a write outside a transaction is never swept
 * into another caller's rollback. On SQLite every query shares one
 * connection; the store relies on Prisma queueing plain statements behind an
 * open interactive transaction, and this test holds it to that.
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
    const now = new Date();
    await db.prisma.repository.create({ data: { id: "rep_plain", name: "acme/plain", createdAt: now } });
    let inside!: () => void;
    const opened = new Promise<void>((r) => (inside = r));
    const failing = db.tx(async (tx) => {
      await tx.repository.create({ data: { id: "rep_rolled", name: "acme/rolled", createdAt: now } });
      inside();
      await new Promise((r) => setTimeout(r, 100));
      throw new Error("roll back");
    });
    await opened;
    // A single-statement write, which Prisma sends without a transaction of its own.
    const plain = db.prisma.$executeRawUnsafe(
      `UPDATE "Repository" SET "goal" = 'kept' WHERE "id" = 'rep_plain'`,
    );
    await expect(failing).rejects.toThrow("roll back");
    await plain;
    const rows = (await db.prisma.repository.findMany()).map((r) => [r.name, r.goal]);
    expect(rows).toEqual([["acme/plain", "kept"]]);
  });
});
