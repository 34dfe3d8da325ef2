import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const LEASE = { silentMs: 60_000, leaseMs: 300_000 };

describe.each(DATABASE_KINDS)("sessions and leases on the server's clock (%s)", (kind) => {
  let backend: TestBackend;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    backend = await startBackend({ kind, lease: LEASE });
    await backend.addRepo("acme/lease");
    alice = await backend.issueToken("acme/lease", "alice");
    bob = await backend.issueToken("acme/lease", "bob");
  });
  afterAll(() => backend?.stop());

  const guardOf = async (key: string) =>
    (await admin.listSessions(backend.deps, "acme/lease")).find((s) => s.key === key)?.guard;

  it("a call renews only its own session; silence then expiry show in guard status", async () => {
    const a1 = agentClient(backend.url, alice, "lease-a1");
    const a2 = agentClient(backend.url, alice, "lease-a2");
    await a1.post({ type: "publish", prompt: "one" });
    await a2.post({ type: "publish", prompt: "two" });
    backend.advance(LEASE.silentMs + 1_000);
    await a1.post({ type: "publish", prompt: "one again" }); // same token, other session
    expect(await guardOf("lease-a1")).toBe("calling-in");
    expect(await guardOf("lease-a2")).toBe("silent");
    backend.advance(LEASE.leaseMs);
    expect(await guardOf("lease-a2")).toBe("expired");
  });

  it("an expired lease frees its scope for peers and drops out of the resolver", async () => {
    const a = agentClient(backend.url, alice, "lease-holder");
    const b = agentClient(backend.url, bob, "lease-taker");
    const aIntent = await a.declare("hold", { objective: "Hold", outputs: ["held-output"] });
    expect((await a.post({ type: "scope", intentId: aIntent, paths: ["lease/app"] })).status).toBe(200);

    const bIntent = (await b.post({ type: "publish", prompt: "take" })).body.data.intentId;
    // bob's intent depends on alice's output; the resolver's action says whether he may go on.
    const bAction = async () =>
      (
        await b.post({
          type: "intent",
          intentId: bIntent,
          intent: { objective: "Take", dependsOn: ["held-output"] },
        })
      ).body.data.action;
    expect(await bAction()).toBe("wait");
    expect((await b.post({ type: "scope", intentId: bIntent, paths: ["lease/app/x.ts"] })).status).toBe(409);

    backend.advance(LEASE.leaseMs + 1_000);
    // bob keeps calling, alice does not: alice's lease expires.
    const retry = await b.post({ type: "scope", intentId: bIntent, paths: ["lease/app/x.ts"] });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(await bAction()).toBe("proceed");
    const released = await backend.deps.db.prisma.event.findFirst({
      where: { intentId: aIntent, kind: "scope.released" },
    });
    expect(released?.summary).toContain("lease expired");

    // When alice comes back, her claim is gone: she must claim again, and now bob holds the path.
    const back = await a.post({ type: "scope", intentId: aIntent, paths: ["lease/app"] });
    expect([back.status, back.body.error?.code]).toEqual([409, "SCOPE_CONFLICT"]);
    expect(back.body.error.details.conflicts[0].person).toBe("bob");
  });

  it("a waiting agent learns from a plain poll that its producer's lease lapsed, with no other change in the room", async () => {
    const producer = agentClient(backend.url, alice, "lapse-producer");
    const waiter = agentClient(backend.url, bob, "lapse-waiter");
    await producer.declare("produce", { objective: "Produce", outputs: ["lapse-out"] });
    const w = (await waiter.post({ type: "publish", prompt: "wait" })).body.data.intentId;
    const waiting = (
      await waiter.post({
        type: "intent",
        intentId: w,
        intent: { objective: "Consume", dependsOn: ["lapse-out"] },
      })
    ).body.data;
    expect(waiting.action).toBe("wait");
    expect((await waiter.poll(w, waiting.packet.cursor)).body.data.packet).toBeNull();
    backend.advance(LEASE.leaseMs + 1_000);
    const after = (await waiter.poll(w, waiting.packet.cursor)).body.data;
    expect(after.packet?.action).toBe("proceed");
    expect(after.packet.decisions[0]).toMatchObject({ action: "proceed", peerIds: [] });
  });

  it("leaseExpiresAt comes from the server's clock, not the client's", async () => {
    const c = agentClient(backend.url, alice, "lease-clock");
    const r = await c.post({ type: "publish", prompt: "clock" });
    const expires = Date.parse(r.body.meta.session.leaseExpiresAt);
    const server = Date.parse(r.body.meta.serverTime);
    expect(expires - server).toBeGreaterThan(LEASE.leaseMs - 5_000);
    expect(expires - server).toBeLessThanOrEqual(LEASE.leaseMs);
    // The test moved the server clock hours ahead of this machine's clock.
    expect(server - Date.now()).toBeGreaterThan(LEASE.leaseMs);
  });
});
