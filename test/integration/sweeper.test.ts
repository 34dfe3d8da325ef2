import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const LEASE = { silentMs: 60_000, leaseMs: 300_000 };

/**
 * Leases by the server's clock: a silent session is marked silent, then
 * expired, and a sweeper frees its scope on time even when no one claims
 * there, once, whichever of two instances sweeps. A late request from the
 * expired session cannot take back or overwrite what a newer holder owns.
 */
describe.each(DATABASE_KINDS)("lease sweeper (%s)", (kind) => {
  let a: TestBackend;
  let b: TestBackend;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    a = await startBackend({ kind, lease: LEASE });
    b = await startBackend({ databaseUrl: a.deps.db.url, lease: LEASE });
    await a.addRepo("acme/sweep");
    alice = await a.issueToken("acme/sweep", "alice");
    bob = await a.issueToken("acme/sweep", "bob");
  });
  afterAll(async () => {
    await b?.close();
    await a?.stop();
  });
  /** Both instances' clocks move together, as servers' clocks do. */
  const advance = (ms: number) => {
    a.advance(ms);
    b.advance(ms);
  };
  const guardOf = async (key: string) =>
    (await admin.listSessions(a.deps, "acme/sweep")).find((s) => s.key === key)?.guard;
  /**
   * Waits for `what`, at most `ms`. SWEPT_MS is a promised deadline: a sweep every 5 s at this lease
   * (live/sweeper sweepInterval), so an expired scope frees within 5 s (measured 3.3 and 4.7 s, as
   * the sweep's phase falls); 15 s is three sweeps.
   */
  const SWEPT_MS = 15_000;
  const until = async (what: () => Promise<boolean>, ms: number) => {
    const start = Date.now();
    while (!(await what()) && Date.now() - start < ms) await new Promise((r) => setTimeout(r, 50));
    return Date.now() - start;
  };

  it("frees an expired session's scope on time with no one claiming, exactly once across two instances", async () => {
    const holder = agentClient(a.url, alice, "sweep-holder");
    const intentId = (await holder.post({ type: "publish", prompt: "hold" })).body.data.intentId;
    expect((await holder.post({ type: "scope", intentId, paths: ["sweep/app"] })).status).toBe(200);

    advance(LEASE.silentMs + 1_000);
    expect(await guardOf("sweep-holder")).toBe("silent");
    expect(await a.deps.db.prisma.claim.count({ where: { intentId } })).toBe(1); // silent still holds

    advance(LEASE.leaseMs);
    expect(await guardOf("sweep-holder")).toBe("expired");
    const waited = await until(
      async () => (await a.deps.db.prisma.claim.count({ where: { intentId } })) === 0,
      SWEPT_MS,
    );
    expect(await a.deps.db.prisma.claim.count({ where: { intentId } })).toBe(0);
    // Both sweepers ran over it: one release event.
    await Promise.all([a.deps.sweeper.sweep(), b.deps.sweeper.sweep()]);
    const released = await a.deps.db.prisma.event.count({ where: { intentId, kind: "scope.released" } });
    expect(released).toBe(1);
    console.log(
      `sweeper (${kind}): scope freed ${waited} ms after expiry with no claimant; ${released} release event from two instances`,
    );
  });

  it("a late request from an expired session cannot take back or overwrite a newer holder's scope", async () => {
    const old = agentClient(a.url, alice, "fence-old");
    const oldIntent = (await old.post({ type: "publish", prompt: "old" })).body.data.intentId;
    expect((await old.post({ type: "scope", intentId: oldIntent, paths: ["fence/app"] })).status).toBe(200);
    advance(LEASE.leaseMs + 1_000);
    await until(
      async () => (await a.deps.db.prisma.claim.count({ where: { intentId: oldIntent } })) === 0,
      SWEPT_MS,
    );

    const fresh = agentClient(b.url, bob, "fence-new");
    const newIntent = (await fresh.post({ type: "publish", prompt: "new" })).body.data.intentId;
    expect((await fresh.post({ type: "scope", intentId: newIntent, paths: ["fence/app"] })).status).toBe(200);

    // The old session wakes up late, on either instance, and tries to reclaim or write into the new holder's scope.
    const reclaim = await old.post({ type: "scope", intentId: oldIntent, paths: ["fence/app"] });
    expect([reclaim.status, reclaim.body.error.code]).toEqual([409, "SCOPE_CONFLICT"]);
    const viaCheckpoint = await agentClient(b.url, alice, "fence-old").post({
      type: "checkpoint",
      intentId: oldIntent,
      status: "working",
      summary: "late",
      paths: ["fence/app/x.ts"],
    });
    expect([viaCheckpoint.status, viaCheckpoint.body.error.code]).toEqual([409, "SCOPE_CONFLICT"]);
    const held = await a.deps.db.prisma.claim.findMany({
      where: {
        repoId: (await a.deps.db.prisma.repository.findFirstOrThrow({ where: { name: "acme/sweep" } })).id,
        intentId: { in: [oldIntent, newIntent] },
      },
    });
    expect(held.map((c) => c.intentId)).toEqual([newIntent]);
    expect(JSON.parse(held[0]!.paths)).toEqual(["fence/app"]);
  });
});
