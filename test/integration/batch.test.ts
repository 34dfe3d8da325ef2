import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore, migrate, openDb, type Db, type Store, type Tx } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { batcher } from "../../backend/src/store/batch.js";
import type { Raw } from "../../backend/src/store/handle.js";

/**
 * Group commit (store/batch): writes to one repository that meet share one
 * transaction, each in its own savepoint. Each still stands or falls alone,
 * and every one answers only after the shared COMMIT.
 */
describe.each(DATABASE_KINDS)("batched writes (%s)", (kind) => {
  let db: Db;
  let store: Store;
  let drop: () => Promise<void>;
  let transactions = 0;
  let statements: string[] = [];
  const counted = new WeakSet<object>();
  const repoId = "rep_batch";

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
    const tx = db.tx.bind(db);
    // Counts the real transactions the store opens, and on PostgreSQL each statement sent in them.
    db.tx = (fn) => (
      transactions++,
      tx((c, raw) => {
        if (raw.pg && !counted.has(raw.pg)) {
          counted.add(raw.pg); // a pool's client comes back: wrap it once
          const query = raw.pg.query.bind(raw.pg) as (...a: unknown[]) => unknown;
          raw.pg.query = ((...a: unknown[]) => {
            const q = a[0] as string | { text: string };
            statements.push(typeof q === "string" ? q : q.text);
            return query(...a);
          }) as typeof raw.pg.query;
        }
        return fn(c, raw);
      })
    );
    store = createStore(db);
    await db.prisma.repository.create({ data: { id: repoId, name: "acme/batch", createdAt: new Date() } });
    await db.prisma.agentToken.create({
      data: { id: "tok_b", repoId, person: "ana", client: null, tokenHash: "h", createdAt: new Date() },
    });
    await db.prisma.session.create({
      data: {
        id: "ses_b",
        repoId,
        tokenId: "tok_b",
        key: "k",
        createdAt: new Date(),
        lastSeenAt: new Date(),
      },
    });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** Write i's event, under the repository's lock. */
  const append = async (t: Tx, i: number) => {
    await t.journal.lock(repoId);
    await t.journal.addEvent({
      repoId,
      intentId: `int_${i}`,
      kind: "checkpoint",
      summary: `w${i}`,
      at: new Date(),
    });
  };
  const write = (i: number, fail: boolean, batch: boolean) =>
    store.tx(
      async (t) => {
        await append(t, i);
        if (fail) throw new Error(`member ${i} fails`);
        return i;
      },
      batch ? { batch: repoId } : undefined,
    );
  const summaries = async () =>
    (await db.prisma.event.findMany({ where: { repoId }, orderBy: { seq: "asc" } })).map((e) => e.summary);

  it("twelve writes that meet share transactions; the one that fails leaves nothing, the others all land", async () => {
    transactions = 0;
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => write(i, i === 5, true)));
    expect(outcomes.map((o) => o.status)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i === 5 ? "rejected" : "fulfilled")),
    );
    expect((outcomes[5] as PromiseRejectedResult).reason.message).toBe("member 5 fails");
    expect(outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []))).toEqual([
      0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11,
    ]);
    // PostgreSQL: the first runs alone, the eleven that arrived meanwhile as one batch. SQLite: a batch
    // starts after the turn's I/O, so all twelve, sent in one turn, run as one.
    expect(transactions).toBe(kind === "sqlite" ? 1 : 2);
    expect(await summaries()).toEqual(["w0", "w1", "w2", "w3", "w4", "w6", "w7", "w8", "w9", "w10", "w11"]);
  });

  it.runIf(kind === "sqlite")(
    "the members' savepoint journal and the statements' journals stay in memory, on both connections",
    async () => {
      // temp_store 2 = MEMORY: by default each page a savepoint first changes was written to a temporary file.
      expect(await db.tx(async (_x, raw) => raw.sqlite!.pragma("temp_store", { simple: true }))).toBe(2);
      expect((await db.read.get("PRAGMA temp_store"))?.temp_store).toBe(2);
    },
  );

  it.runIf(kind === "postgres")(
    "a batch takes the repository's lock once and sends one NOTIFY; after a member that took it fails, the next takes it again",
    async () => {
      const count = (re: RegExp) => statements.filter((q) => re.test(q)).length;
      const locks = /UPDATE "Repository" SET "claimVersion"/;
      const notifies = /pg_notify/;
      statements = [];
      const first = write(200, false, true); // alone: no savepoint
      const together = [201, 202, 203].map((i) => write(i, false, true));
      await Promise.all([first, ...together]);
      expect(count(/SAVEPOINT/)).toBe(6); // three members, SAVEPOINT and RELEASE each; none for the lone write
      expect(count(locks)).toBe(2);
      expect(count(notifies)).toBe(2);
      statements = [];
      const lone = write(300, false, true);
      const after = [write(301, true, true), write(302, false, true), write(303, false, true)];
      const settled = await Promise.allSettled([lone, ...after]);
      expect(settled.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
      // 301 took the lock and failed: its rollback released it, so 302 takes it again.
      expect(count(locks)).toBe(3);
      expect(count(notifies)).toBe(2);
      expect((await summaries()).filter((x) => /^w3\d\d$/.test(x!))).toEqual(["w300", "w302", "w303"]);
    },
  );

  // On PostgreSQL these writes are sent without waiting for their answers (store/sql/exec `later`,
  // pipelined): a failure must still fail its own member, with its own error, and only that member.
  const failing = (i: number, how: "check" | "constraint" | null, batch = true) =>
    store.tx(
      async (t) => {
        await append(t, i);
        // No such intent: the update changes no row (the transaction goes on); the checkpoint breaks a foreign key.
        if (how === "check") await t.intents.update("int_missing", { state: "working" });
        if (how === "constraint")
          await t.intents.addCheckpoint({
            id: `chk_${i}`,
            intentId: "int_missing",
            status: "working",
            summary: "nothing",
            paths: null,
            source: "provided-unverified",
            at: new Date(),
          });
        // A read after it: on PostgreSQL it fails only because the transaction is aborted.
        await t.intents.get("int_missing");
        return i;
      },
      batch ? { batch: repoId } : undefined,
    );

  it("a write whose answer nobody waits for still fails its own member, with its own error", async () => {
    const lone = failing(400, null);
    const members = [failing(401, "check"), failing(402, "constraint"), failing(403, null)];
    const settled = await Promise.allSettled([lone, ...members]);
    expect(settled.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((settled[1] as PromiseRejectedResult).reason.message).toMatch(
      /0 rows changed where 1 should have/,
    );
    expect((settled[2] as PromiseRejectedResult).reason.message).toMatch(/foreign key/i);
    const alone = await Promise.allSettled([failing(404, "check", false), failing(405, "constraint", false)]);
    expect(alone.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect((alone[1] as PromiseRejectedResult).reason.message).toMatch(/foreign key/i);
    expect((await summaries()).filter((x) => /^w4\d\d$/.test(x!))).toEqual(["w400", "w403"]);
  });

  it.runIf(kind === "postgres")(
    "COMMIT goes out behind the writes unanswered: a transaction aborted by an error it caught fails, not reported committed",
    async () => {
      const before = (await summaries()).length;
      const caught = db.tx(async (x) => {
        await x.later(
          `INSERT INTO "Event" ("repoId", "intentId", "kind", "peerIds", "summary", "createdAt") VALUES (?, ?, ?, ?, ?, ?)`,
          [repoId, "int_caught", "checkpoint", "[]", "caught", x.time(new Date())],
        );
        await x.get(`SELECT 1 / 0`).catch(() => {}); // aborts the transaction; the caller swallows it
      });
      await expect(caught).rejects.toThrow(/not committed \(ROLLBACK\)/);
      expect((await summaries()).length).toBe(before);
    },
  );

  it("without a batch key each write is a transaction of its own", async () => {
    transactions = 0;
    await Promise.all(Array.from({ length: 5 }, (_, i) => write(100 + i, false, false)));
    expect(transactions).toBe(5);
  });

  it("a batch whose COMMIT fails fails every member, and none of them lands", async () => {
    // A constraint checked only at COMMIT (SQLite: a deferred foreign key, no parent 3;
    // PostgreSQL: a deferred unique key, 2 twice): each member's own statements succeed.
    const ddl =
      kind === "sqlite"
        ? [
            `CREATE TABLE "BatchParent" ("id" INTEGER PRIMARY KEY)`,
            `INSERT INTO "BatchParent" ("id") VALUES (1)`,
            `CREATE TABLE "BatchChild" ("p" INTEGER REFERENCES "BatchParent"("id") DEFERRABLE INITIALLY DEFERRED)`,
          ]
        : [`CREATE TABLE "BatchChild" ("p" INTEGER UNIQUE DEFERRABLE INITIALLY DEFERRED)`];
    for (const sql of ddl) await db.prisma.$executeRawUnsafe(sql);
    const insert = async (raw: Raw, p: number) => {
      if (raw.sqlite) raw.sqlite.prepare(`INSERT INTO "BatchChild" ("p") VALUES (?)`).run(p);
      else await raw.pg!.query(`INSERT INTO "BatchChild" ("p") VALUES ($1)`, [p]);
    };
    const batches = batcher(db, async () => {});
    transactions = 0;
    const first = batches.run("k", async (_c, raw) => insert(raw, 1)); // alone
    if (kind === "sqlite") await first; // SQLite gathers one turn's writes: this one's turn is over first
    const together = [
      batches.run("k", async (_c, raw) => insert(raw, kind === "sqlite" ? 1 : 2)),
      batches.run("k", async (_c, raw) => insert(raw, kind === "sqlite" ? 3 : 2)),
    ];
    const settled = Promise.allSettled(together); // attached now: they may fail while `first` is awaited
    await first;
    expect((await settled).map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(transactions).toBe(2);
    const rows = (await db.prisma.$queryRawUnsafe<{ p: number }[]>(`SELECT "p" FROM "BatchChild"`)).map((r) =>
      Number(r.p),
    );
    expect(rows).toEqual([1]);
  });
});
