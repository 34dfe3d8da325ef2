import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * The retention rule in the running server (live/sweeper, COHENT_RETENTION_DAYS, 30 days by default):
 * real agents write decisions, packets, notices and guard catches over HTTP; the server's clock moves
 * on a month; the sweeper's pass deletes what is older than the rule, keeps what an open intent still
 * stands on, and nothing younger. Counted in the database through Prisma, not through the store.
 */
describe.each(DATABASE_KINDS)("retention (%s)", (kind) => {
  let backend: TestBackend;
  const DAY = 86_400_000;

  beforeAll(async () => {
    // No admission control: this process runs the server, its sweeper's passes and the test's counts in
    // one event loop, and the loop's lag (http/admission) would refuse an agent's call now and then.
    backend = await startBackend({ kind, admission: null });
    await backend.addRepo("acme/keep");
  });
  afterAll(async () => backend?.stop());

  it("deletes a closed intent's rows after 30 days, keeps the open one's state and anything younger", async () => {
    const ana = agentClient(backend.url, await backend.issueToken("acme/keep", "ana"), "ana-1");
    const bo = agentClient(backend.url, await backend.issueToken("acme/keep", "bo"), "bo-1");
    /** A request that must succeed; its envelope is the failure's message. */
    const ok = async (p: Promise<{ status: number; body: unknown }>) => {
      const r = await p;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r;
    };
    const declare = { objective: "Cart", plan: ["do it"], components: ["cart"], state: "planned" };
    const a = (await ana.post({ type: "publish", prompt: "Rework the cart", paths: ["src/cart.ts"] })).body
      .data.intentId as string;
    await ok(ana.post({ type: "intent", intentId: a, intent: declare }));
    await ok(ana.post({ type: "scope", intentId: a, paths: ["src/cart.ts"] }));
    const b = (await bo.post({ type: "publish", prompt: "Rework the cart too", paths: ["src/cart.ts"] })).body
      .data.intentId as string;
    await ok(bo.post({ type: "intent", intentId: b, intent: declare }));
    // Bo queues behind Ana, then Ana is done: Bo is told he holds the file (a notice), and polls.
    await bo.post({ type: "scope", intentId: b, paths: ["src/cart.ts"], queue: true });
    await ana.post({ type: "guard", intentId: a, kind: "outside-scope", tool: "Edit", paths: ["src/x.ts"] });
    await bo.post({
      type: "guard",
      intentId: b,
      kind: "scope-conflict",
      tool: "Edit",
      paths: ["src/cart.ts"],
    });
    await ok(ana.post({ type: "checkpoint", intentId: a, status: "completed" }));
    await bo.poll(b);

    const prisma = backend.deps.db.prisma;
    /** The rows made before `cutoff` (all of them without one), counted through Prisma. */
    const counts = async (cutoff?: Date) => {
      const old = cutoff ? { createdAt: { lt: cutoff } } : {};
      return {
        decisions: {
          a: await prisma.decision.count({ where: { ...old, intentId: a } }),
          b: await prisma.decision.count({ where: { ...old, intentId: b } }),
        },
        notices: {
          told: await prisma.notice.count({ where: { ...old, toldAt: { not: null } } }),
          untoldOpen: await prisma.notice.count({ where: { ...old, toldAt: null, intentId: b } }),
          all: await prisma.notice.count({ where: old }),
        },
        packets: await prisma.packet.count({ where: old }),
        catches: await prisma.guardCatch.count({ where: old }),
        events: await prisma.event.count({ where: old }),
      };
    };
    const first = await counts();
    // Something of each kind was written, else the test could not fail.
    expect(first.decisions.a).toBeGreaterThan(0);
    expect(first.decisions.b).toBeGreaterThan(0);
    expect(first.notices.all).toBeGreaterThan(0);
    expect(first.packets).toBeGreaterThan(0);
    expect(first.catches).toBe(2);

    // 29 days on: the lease sweep first (Bo's claim has expired: its release writes now), then nothing is old enough.
    backend.advance(29 * DAY);
    await backend.deps.sweeper.sweep();
    const at29 = await counts();
    expect(await backend.deps.sweeper.prune()).toEqual({ decisions: 0, notices: 0, packets: 0, catches: 0 });
    expect(await counts()).toEqual(at29);

    // A young row, written now: it stays whatever happens to the old ones.
    await bo.post({ type: "guard", intentId: b, kind: "outside-scope", tool: "Edit", paths: ["src/y.ts"] });

    // 31 days on: every row older than 30 days goes but an open intent's decisions and untold notices.
    backend.advance(2 * DAY);
    await backend.deps.sweeper.sweep();
    const cutoff = new Date(backend.deps.clock().getTime() - 30 * DAY);
    const old = await counts(cutoff);
    const all = await counts();
    expect(old.packets).toBe(first.packets); // the first part's rows are the old ones
    const gone = await backend.deps.sweeper.prune();
    const oldAfter = await counts(cutoff);
    expect(oldAfter.decisions).toEqual({ a: 0, b: old.decisions.b });
    expect(oldAfter.notices).toEqual({
      told: 0,
      untoldOpen: old.notices.untoldOpen,
      all: old.notices.untoldOpen,
    });
    expect(oldAfter.packets).toBe(0);
    expect(oldAfter.catches).toBe(0);
    // The change log is not the rule's.
    expect(oldAfter.events).toBe(old.events);
    expect(gone).toEqual({
      decisions: old.decisions.a,
      notices: old.notices.all - old.notices.untoldOpen,
      packets: old.packets,
      catches: 2,
    });
    console.log(
      `retention (${kind}): deleted ${JSON.stringify(gone)}; kept of the old: ${old.decisions.b} open decisions, ${old.notices.untoldOpen} untold notices`,
    );
    // Nothing younger went: every count fell by exactly what was deleted.
    const allAfter = await counts();
    expect(allAfter.packets).toBe(all.packets - gone.packets);
    expect(allAfter.catches).toBe(all.catches - 2);
    expect(allAfter.catches).toBeGreaterThanOrEqual(1);
    expect(allAfter.notices.all).toBe(all.notices.all - gone.notices);
    expect(allAfter.decisions.a + allAfter.decisions.b).toBe(
      all.decisions.a + all.decisions.b - gone.decisions,
    );
    // The repository's page still reads.
    await ok(bo.post({ type: "status" }));
  });
});
