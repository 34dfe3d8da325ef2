import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, PG_BASE_URL, startBackend, type TestBackend } from "../helpers/backend.js";

/**
 * PostgreSQL: the answers a write waits for while it holds its repository's lock (store/journal
 * `lock`). One repository's writes are one chain (store/batch, and the row lock across instances), so
 * each wait under the lock delays every write queued behind it. A wait is counted where the
 * transaction sends a statement after an answer arrived: the statements sent before it, without
 * waiting, share one round trip (the client pipelines). Counted on a real server, from the round trip
 * that carries the lock to the COMMIT's, inclusive.
 */
interface Traced {
  /** Each round trip's statements, in the order sent. */
  trips: string[][];
  /** Set when an answer arrived: the next statement starts a new round trip. */
  answered: boolean;
}
const LOCK = /UPDATE "Repository" SET "claimVersion"/;
const has = (trip: string[], re: RegExp) => trip.some((q) => re.test(q));
const short = (trips: string[][]) => trips.map((t) => t.map((q) => q.slice(0, 60)));

describe.runIf(PG_BASE_URL)("round trips under the repository's lock (postgres)", () => {
  let backend: TestBackend;
  let traced: Traced[] = [];
  const wrapped = new WeakSet<object>();
  const current = new WeakMap<object, Traced>();
  let token = "";

  beforeAll(async () => {
    backend = await startBackend({ kind: "postgres" });
    await backend.addRepo("acme/trips");
    token = await backend.issueToken("acme/trips", "ana");
    const db = backend.deps.db;
    const tx = db.tx.bind(db);
    // Every statement of every transaction the store opens, grouped into round trips.
    db.tx = (fn) =>
      tx((x, raw) => {
        const client = raw.pg!;
        const t: Traced = { trips: [["BEGIN"]], answered: true };
        traced.push(t);
        current.set(client, t);
        if (!wrapped.has(client)) {
          wrapped.add(client); // a pool's client comes back: wrap it once
          const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
          client.query = ((...a: unknown[]) => {
            const q = a[0] as string | { text: string };
            const on = current.get(client)!;
            if (on.answered) on.trips.push([]);
            on.answered = false;
            on.trips.at(-1)!.push(typeof q === "string" ? q : q.text);
            const p = query(...a);
            const seen = () => void (on.answered = true);
            p.then(seen, seen);
            return p;
          }) as typeof client.query;
        }
        return fn(x, raw);
      });
  });
  afterAll(async () => {
    await backend?.stop();
  });

  /** An agent that reads its kill switch before each call, as a guarded agent's hook does (it keeps the untold counts current). */
  const agentOf = (session: string) => {
    const agent = agentClient(backend.url, token, session);
    return async (body: Record<string, unknown>) => {
      const headers = { authorization: `Bearer ${token}`, "x-cohent-session": session };
      expect((await fetch(`${backend.url}/api/agent/session`, { headers })).status).toBe(200);
      const r = await agent.post(body);
      expect(r.body.ok, JSON.stringify(r.body)).toBe(true);
      return r.body.data;
    };
  };
  const locking = () => traced.filter((t) => t.trips.some((trip) => has(trip, LOCK)));

  /** The waits under the lock of the one locking transaction `write` runs. */
  const underLock = async (write: () => Promise<unknown>) => {
    traced = [];
    await write();
    expect(locking()).toHaveLength(1);
    const { trips } = locking()[0]!;
    const from = trips.findIndex((trip) => has(trip, LOCK));
    expect(trips.at(-1)).toContain("COMMIT");
    return { waits: trips.length - from, trips: short(trips.slice(from)) };
  };

  it("a publish, a scope and checkpoints with and without paths, each alone", async () => {
    const call = agentOf("trips-1");
    // A first task, so that the measured publish supersedes it as an agent's next task does.
    const first = await call({ type: "publish", prompt: "First task" });
    await call({ type: "scope", intentId: first.intentId, paths: ["src/first"] });
    let intentId = "";
    const publish = await underLock(
      async () => (intentId = (await call({ type: "publish", prompt: "Next" })).intentId),
    );
    await call({
      type: "intent",
      intentId,
      intent: { objective: "Edit", plan: ["Edit"], components: ["m"] },
    });
    const scope = await underLock(() => call({ type: "scope", intentId, paths: ["src/a"] }));
    const withPaths = await underLock(() =>
      call({ type: "checkpoint", intentId, status: "working", summary: "s1", paths: ["src/a/x.ts"] }),
    );
    const without = await underLock(() =>
      call({ type: "checkpoint", intentId, status: "working", summary: "s2" }),
    );
    const all = { publish, scope, withPaths, without };
    const waits = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.waits]));
    expect(waits, JSON.stringify(all, null, 1)).toEqual({ publish: 6, scope: 2, withPaths: 2, without: 1 });
  });

  it("checkpoints with paths that meet in one batch: each member's waits", async () => {
    const agents = Array.from({ length: 5 }, (_, i) => ({ call: agentOf(`trips-b${i}`), intentId: "" }));
    for (const [i, a] of agents.entries()) {
      a.intentId = (await a.call({ type: "publish", prompt: `Task ${i}` })).intentId;
      await a.call({ type: "scope", intentId: a.intentId, paths: [`src/b${i}`] });
    }
    // The repository's lock held from outside: the first checkpoint waits for it, the others queue
    // behind that transaction and then run as one batch.
    const outside = new pg.Client({ connectionString: backend.deps.db.url });
    await outside.connect();
    traced = [];
    try {
      await outside.query("BEGIN");
      await outside.query(`UPDATE "Repository" SET "claimVersion" = "claimVersion" + 1`);
      const done = agents.map((a, i) =>
        a.call({
          type: "checkpoint",
          intentId: a.intentId,
          status: "working",
          summary: "b",
          paths: [`src/b${i}/x.ts`],
        }),
      );
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const waiting = await outside.query(
          `SELECT 1 FROM pg_stat_activity WHERE "wait_event_type" = 'Lock' AND "datname" = current_database()`,
        );
        if (waiting.rowCount) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 300)); // the other requests reach the batch's queue
      await outside.query("COMMIT");
      await Promise.all(done);
    } finally {
      await outside.end();
    }
    const batch = locking().find((t) => t.trips.some((trip) => has(trip, /^SAVEPOINT/)));
    expect(batch, JSON.stringify(traced.map((t) => short(t.trips)))).toBeDefined();
    const { trips } = batch!;
    const starts = trips.flatMap((trip, i) => (has(trip, /^SAVEPOINT/) ? [i] : []));
    expect(starts.length).toBeGreaterThanOrEqual(2);
    // Between one member's SAVEPOINT and the next's (the last one's up to the COMMIT, which it shares).
    const members = starts.slice(0, -1).map((s, k) => starts[k + 1]! - s);
    expect(new Set(members), JSON.stringify(short(trips), null, 1)).toEqual(new Set([2]));
    expect(trips.length - starts.at(-1)!, JSON.stringify(short(trips), null, 1)).toBe(3);
  });
});
