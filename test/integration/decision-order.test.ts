import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, PG_BASE_URL, startBackend, type TestBackend } from "../helpers/backend.js";

process.env.COHENT_RATE_LIMIT = "off";

/**
 * Backends waiting behind the holder's lock on the repository row: blocked by the holder, or by one that
 * is (the second waiter queues on the first's tuple lock). Any other lock wait in the database is not counted.
 */
async function waiting(c: pg.Client): Promise<number> {
  const { rows } = await c.query(
    `WITH w AS (SELECT pid, pg_blocking_pids(pid) AS b FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock')
     SELECT count(*)::int AS n FROM w
      WHERE pg_backend_pid() = ANY(b)
         OR b && (SELECT coalesce(array_agg(pid), '{}') FROM w WHERE pg_backend_pid() = ANY(b))`,
  );
  return rows[0].n as number;
}
async function until(what: string, ok: () => Promise<boolean>) {
  for (const deadline = Date.now() + 10_000; !(await ok());)
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    else await new Promise((r) => setTimeout(r, 10));
}

/**
 * A decision a poll or a context records is made in the repository's order,
 * even when it read the room before that order reached it. PostgreSQL only:
 * there a poll reads without the repository lock and takes it only to record;
 * on SQLite every transaction holds the write lock from BEGIN IMMEDIATE, so
 * the read cannot be stale there.
 *
 * A stood down as X's duplicate; X is abandoned; B declares the same objective
 * through the other instance, and proceeds (A stands down, X is gone). A's
 * poll (or context) reads the room while B's decision waits for the lock, so
 * it finds no owner and would proceed; it then waits for the lock behind B.
 * Recorded from that read, both would proceed. Decided again under the lock,
 * A is B's duplicate.
 */
describe.skipIf(!PG_BASE_URL)("decisions recorded in the repository's order (postgres)", () => {
  const backends: TestBackend[] = [];
  let holder: pg.Client;
  beforeAll(async () => {
    const first = await startBackend({ kind: "postgres" });
    backends.push(first, await startBackend({ databaseUrl: first.deps.db.url }));
    holder = new pg.Client({ connectionString: first.deps.db.url });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await backends[1]?.close();
    await backends[0]?.stop();
  });

  it.each(["poll", "context"] as const)(
    "a %s that read before a peer's decision does not record a contradicting one",
    async (call) => {
      const [a, b] = backends as [TestBackend, TestBackend];
      const repo = `acme/order-${call}`;
      await a.addRepo(repo);
      const [tx, ta, tb] = await Promise.all(["xena", "ada", "bob"].map((p) => a.issueToken(repo, p)));
      const x = agentClient(a.url, tx!, `${call}-x`);
      const me = agentClient(a.url, ta!, `${call}-a`);
      const peer = agentClient(b.url, tb!, `${call}-b`);
      const intent = { objective: "Build the export", outputs: ["export"] };

      const ix = await x.declare("export", intent);
      const ia = await me.declare("export", intent);
      const [decided] = await a.deps.db.prisma.decision.findMany({
        where: { intentId: ia },
        orderBy: { createdAt: "desc" },
      });
      expect([decided?.action, decided?.peerIds]).toEqual(["duplicate", JSON.stringify([ix])]);
      await x.post({ type: "intent", intentId: ix, intent: { ...intent, state: "abandoned" } });
      const ib = (await peer.post({ type: "publish", prompt: "export" })).body.data.intentId as string;

      // The repository's lock held, as another instance's write holds it, but locked without a new row
      // version: waiters on an updated row all chase its new version when the holder commits, in no set
      // order (A then went first in about one run of ten, and there was nothing stale left to test); on a
      // row only locked, they take it in the order they queued, B first.
      const { id: repoId } = await a.deps.db.prisma.repository.findUniqueOrThrow({ where: { name: repo } });
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "Repository" WHERE "id" = $1 FOR NO KEY UPDATE`, [repoId]);
      const declared = peer.post({ type: "intent", intentId: ib, intent });
      await until("B's intent to wait for the lock", async () => (await waiting(holder)) === 1);
      // A's call reads now (B not committed), then waits for the lock behind B.
      const answered = call === "poll" ? me.poll(ia, "0") : me.post({ type: "context", intentId: ia });
      await until(`A's ${call} to wait for the lock`, async () => (await waiting(holder)) === 2);
      await holder.query("COMMIT");

      const [fromB, fromA] = await Promise.all([declared, answered]);
      expect(fromB.status).toBe(200);
      expect([fromB.body.data.action, fromB.body.data.peerIds]).toEqual(["proceed", []]);
      expect(fromA.status).toBe(200);
      const action = call === "poll" ? fromA.body.data.packet?.action : fromA.body.data.action;
      expect(action).toBe("duplicate");
      const [last] = await a.deps.db.prisma.decision.findMany({
        where: { intentId: ia },
        orderBy: { createdAt: "desc" },
      });
      expect([last?.action, last?.peerIds]).toEqual(["duplicate", JSON.stringify([ib])]);
    },
  );
});
