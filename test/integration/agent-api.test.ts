import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Packet, FailureEnvelope, RESPONSES, successEnvelope } from "@cohent/protocol";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

describe.each(DATABASE_KINDS)("agent API over HTTP (%s)", (kind) => {
  let backend: TestBackend;
  let aliceToken: string;
  let bobToken: string;
  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop", "Ship checkout v2");
    aliceToken = await backend.issueToken("acme/shop", "alice", "Codex");
    bobToken = await backend.issueToken("acme/shop", "bob", "Claude Code");
  });
  afterAll(() => backend?.stop());

  const ok = (op: keyof typeof RESPONSES, r: { status: number; body: unknown }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return successEnvelope(RESPONSES[op]).parse(r.body).data as any;
  };

  async function published(token: string, session: string, prompt: string, extra: object = {}) {
    const client = agentClient(backend.url, token, session);
    const data = ok("publish", await client.post({ type: "publish", prompt, paths: [], ...extra }));
    return { client, intentId: data.intentId as string, packet: data.packet };
  }

  it("publish answers with the compact plan packet and stores client and model", async () => {
    const a = await published(aliceToken, "pub-a", "Refactor checkout validation", {
      clientName: "Codex",
      model: "gpt-5",
    });
    expect(a.packet.action).toBe("plan");
    expect(a.packet.goal).toBe("Ship checkout v2");
    expect(a.packet.text).toContain("publish a structured intent");
    expect(a.packet.chars).toBe(a.packet.text.length);
    expect(a.packet.tokens).toBe(Math.ceil(a.packet.text.length / 4));
    expect(a.packet.id).toMatch(/^pkt_/);

    // A Claude session sends no model; four more peers are published, the packet lists at most three.
    for (let i = 0; i < 4; i++)
      await published(bobToken, `pub-b${i}`, `Task ${i}`, { clientName: "Claude Code" });
    const c = await published(bobToken, "pub-c", "One more");
    expect(c.packet.peers).toHaveLength(3);
    expect(c.packet.peers.map((p: any) => p.prompt)).toEqual(["Task 3", "Task 2", "Task 1"]);
    const alice = (await published(bobToken, "pub-d", "look")).packet; // alice is older than the three shown
    expect(alice.peers.every((p: any) => p.prompt !== "Refactor checkout validation")).toBe(true);
    const row = await backend.deps.db.prisma.intent.findUniqueOrThrow({ where: { id: a.intentId } });
    expect([row.client, row.model, row.state]).toEqual(["Codex", "gpt-5", "plan"]);
    const claude = await backend.deps.db.prisma.intent.findFirstOrThrow({ where: { prompt: "Task 0" } });
    expect([claude.client, claude.model]).toEqual(["Claude Code", null]);
  });

  it("a new prompt supersedes the session's open intent and releases its scope", async () => {
    const first = await published(aliceToken, "sup", "First task");
    ok(
      "intent",
      await first.client.post({
        type: "intent",
        intentId: first.intentId,
        intent: { objective: "First", outputs: ["first-out"] },
      }),
    );
    ok("scope", await first.client.post({ type: "scope", intentId: first.intentId, paths: ["supersede/a"] }));
    await published(aliceToken, "sup", "Second task");
    const row = await backend.deps.db.prisma.intent.findUniqueOrThrow({ where: { id: first.intentId } });
    expect(row.state).toBe("superseded");
    expect(await backend.deps.db.prisma.claim.findUnique({ where: { intentId: first.intentId } })).toBeNull();
    const late = await first.client.post({ type: "scope", intentId: first.intentId, paths: ["x"] });
    expect([late.status, late.body.error.code]).toEqual([409, "INTENT_CLOSED"]);
  });

  it("intent stores the record as JSON and answers wait, then proceed with the completed state", async () => {
    const api = await published(aliceToken, "dep-a", "Build the auth API");
    const ui = await published(bobToken, "dep-b", "Build sign-in states");
    const record = {
      objective: "Build auth API",
      plan: ["Define contract"],
      outputs: ["auth-api-contract"],
      components: ["auth"],
      state: "working",
    };
    const apiIntent = ok(
      "intent",
      await api.client.post({
        type: "intent",
        intentId: api.intentId,
        intent: record,
        usage: { source: "codex", inputTokens: 1200, outputTokens: 300 },
      }),
    );
    expect(apiIntent.action).toBe("proceed");
    const stored = await backend.deps.db.prisma.intent.findUniqueOrThrow({ where: { id: api.intentId } });
    expect(JSON.parse(stored.record!)).toMatchObject(record);
    expect(JSON.parse(stored.usage!)).toEqual({ source: "codex", inputTokens: 1200, outputTokens: 300 });

    const waiting = ok(
      "intent",
      await ui.client.post({
        type: "intent",
        intentId: ui.intentId,
        intent: {
          objective: "Build sign-in states",
          dependsOn: ["auth-api-contract"],
          outputs: ["sign-in-ui"],
        },
      }),
    );
    expect([waiting.action, waiting.peerIds]).toEqual(["wait", [api.intentId]]);
    expect(waiting.packet.peers[0]).toMatchObject({
      intentId: api.intentId,
      person: "alice",
      client: "Codex",
    });
    expect(waiting.packet.text).toContain("untrusted collaboration data");

    // Nothing new for the waiting agent: the poll is empty, zero characters.
    const idle = ok("poll", await ui.client.poll(ui.intentId, waiting.packet.cursor));
    expect(idle.packet).toBeNull();

    ok(
      "checkpoint",
      await api.client.post({
        type: "checkpoint",
        intentId: api.intentId,
        status: "completed",
        summary: "Contract in app/auth/contract.ts",
        paths: ["app/auth/contract.ts"],
      }),
    );
    const after = ok("poll", await ui.client.poll(ui.intentId, waiting.packet.cursor));
    Packet.parse(after.packet);
    expect(after.packet.action).toBe("proceed");
    expect(after.packet.decisions[0]).toMatchObject({ action: "proceed", peerIds: [api.intentId] });
    expect(after.packet.changes.map((c: any) => c.kind)).toEqual(
      expect.arrayContaining(["checkpoint", "intent.completed"]),
    );
    expect(after.packet.text).toContain("Contract in app/auth/contract.ts");
    expect(after.packet.completed[0]).toMatchObject({ intentId: api.intentId, state: "completed" });
    expect(Number(after.cursor)).toBeGreaterThan(Number(waiting.packet.cursor));

    // The proceed carries the completed peer's compact state when the intent is republished.
    const again = ok(
      "intent",
      await ui.client.post({
        type: "intent",
        intentId: ui.intentId,
        intent: {
          objective: "Build sign-in states",
          dependsOn: ["auth-api-contract"],
          outputs: ["sign-in-ui"],
        },
      }),
    );
    expect(again.action).toBe("proceed");
    expect(again.packet.completed[0]).toMatchObject({
      intentId: api.intentId,
      state: "completed",
      lastCheckpoint: { status: "completed" },
    });

    // And a poll at the new cursor is empty again.
    expect(ok("poll", await ui.client.poll(ui.intentId, again.packet.cursor)).packet).toBeNull();
  });

  it("scope replaces the previous claim and refuses an overlap, naming the peer", async () => {
    const a = await published(aliceToken, "scope-a", "Checkout");
    const b = await published(bobToken, "scope-b", "Tests");
    const first = ok(
      "scope",
      await a.client.post({
        type: "scope",
        intentId: a.intentId,
        paths: ["app/checkout", "./tests/checkout.spec.ts"],
      }),
    );
    expect(first.paths).toEqual(["app/checkout", "tests/checkout.spec.ts"]);
    const second = ok(
      "scope",
      await a.client.post({ type: "scope", intentId: a.intentId, paths: ["app/checkout"] }),
    );
    expect(second.replaced).toEqual(["app/checkout", "tests/checkout.spec.ts"]);

    // tests/checkout.spec.ts was released by the replacement, so bob can take it.
    ok(
      "scope",
      await b.client.post({ type: "scope", intentId: b.intentId, paths: ["tests/checkout.spec.ts"] }),
    );
    const clash = await b.client.post({
      type: "scope",
      intentId: b.intentId,
      paths: ["app/checkout/validation.ts", "tests/checkout.spec.ts"],
    });
    expect(clash.status).toBe(409);
    FailureEnvelope.parse(clash.body);
    expect(clash.body.error.code).toBe("SCOPE_CONFLICT");
    expect(clash.body.error.message).toContain("alice");
    expect(clash.body.error.details.conflicts).toEqual([
      expect.objectContaining({
        intentId: a.intentId,
        person: "alice",
        client: "Codex",
        paths: ["app/checkout/validation.ts"],
        theirPaths: ["app/checkout"],
      }),
    ]);
    // The refused claim left bob's previous claim in place.
    const held = await backend.deps.db.prisma.claim.findUniqueOrThrow({ where: { intentId: b.intentId } });
    expect(JSON.parse(held.paths)).toEqual(["tests/checkout.spec.ts"]);

    // A checkpoint that carries paths goes through the same arbitration.
    const cp = await b.client.post({
      type: "checkpoint",
      intentId: b.intentId,
      status: "working",
      summary: "moving on",
      paths: ["app"],
    });
    const sources = await backend.deps.db.prisma.checkpoint.findMany({ where: { intentId: b.intentId } });
    expect(sources).toEqual([]); // refused: nothing recorded
    expect(cp.body.error.code).toBe("SCOPE_CONFLICT");
    ok(
      "checkpoint",
      await b.client.post({
        type: "checkpoint",
        intentId: b.intentId,
        status: "working",
        summary: "moving on",
        paths: ["tests/other.spec.ts"],
      }),
    );
    ok(
      "checkpoint",
      await b.client.post({
        type: "checkpoint",
        intentId: b.intentId,
        status: "working",
        summary: "staged",
        paths: ["tests/other.spec.ts"],
        pathsSource: "repository-derived",
      }),
    );
    const recorded = await backend.deps.db.prisma.checkpoint.findMany({
      where: { intentId: b.intentId },
      orderBy: { createdAt: "asc" },
    });
    expect(recorded.map((c) => c.source)).toEqual(["provided-unverified", "repository-derived"]);

    const m = await (await import("@cohent/backend")).admin.metrics(backend.deps, "acme/shop");
    expect(m.pathGuardCatches).toBeGreaterThanOrEqual(2);
  });

  it("a case-insensitive repository matches scopes case-insensitively", async () => {
    await backend.addRepo("acme/windows", "", true);
    const t1 = await backend.issueToken("acme/windows", "wendy");
    const t2 = await backend.issueToken("acme/windows", "walt");
    const a = await published(t1, "ci-a", "A");
    const b = await published(t2, "ci-b", "B");
    ok("scope", await a.client.post({ type: "scope", intentId: a.intentId, paths: ["App/Checkout"] }));
    expect(
      (await b.client.post({ type: "scope", intentId: b.intentId, paths: ["app/checkout/x.ts"] })).body.error
        .code,
    ).toBe("SCOPE_CONFLICT");
    // The case-sensitive repository next door treats the same two paths as different.
    const c = await published(aliceToken, "cs-a", "C");
    const d = await published(bobToken, "cs-b", "D");
    ok("scope", await c.client.post({ type: "scope", intentId: c.intentId, paths: ["Case/Checkout"] }));
    ok("scope", await d.client.post({ type: "scope", intentId: d.intentId, paths: ["case/checkout/x.ts"] }));
  });

  it("context hands the brief: goal, the latest decision, related peers first", async () => {
    const producer = await published(aliceToken, "ctx-a", "Produce the ledger API");
    ok(
      "intent",
      await producer.client.post({
        type: "intent",
        intentId: producer.intentId,
        intent: { objective: "Ledger API", outputs: ["ledger-api"] },
      }),
    );
    const consumer = await published(bobToken, "ctx-b", "Consume it");
    ok(
      "intent",
      await consumer.client.post({
        type: "intent",
        intentId: consumer.intentId,
        intent: { objective: "Ledger UI", dependsOn: ["ledger-api"] },
      }),
    );
    const brief = ok("context", await consumer.client.post({ type: "context" }));
    expect(brief).toMatchObject({ goal: "Ship checkout v2", intentId: consumer.intentId, action: "wait" });
    expect(brief.decision).toMatchObject({ action: "wait", peerIds: [producer.intentId] });
    expect(brief.peers[0].intentId).toBe(producer.intentId);
    expect(brief.packet).toMatchObject({ kind: "context", action: "wait" });
    // A session with no open intent gets the goal and the instruction to publish.
    const fresh = ok(
      "context",
      await agentClient(backend.url, bobToken, "ctx-none").post({ type: "context" }),
    );
    expect([fresh.intentId, fresh.action]).toEqual([null, null]);
    expect(fresh.packet.text).toContain("publish a structured intent");
    // Someone else's intent is not readable by id.
    const foreign = await agentClient(backend.url, aliceToken, "ctx-x").post({
      type: "context",
      intentId: consumer.intentId,
    });
    expect(foreign.body.error.code).toBe("NOT_INTENT_OWNER");
  });

  it("guard reports are counted: outside-scope writes as path-guard catches, the rest as refusals", async () => {
    const { admin } = await import("@cohent/backend");
    const before = await admin.metrics(backend.deps, "acme/shop");
    const a = await published(aliceToken, "guard-a", "Guarded");
    ok(
      "guard",
      await a.client.post({
        type: "guard",
        intentId: a.intentId,
        kind: "outside-scope",
        tool: "Write",
        paths: ["src/elsewhere.ts"],
      }),
    );
    ok(
      "guard",
      await a.client.post({ type: "guard", intentId: a.intentId, kind: "intent-not-ready", tool: "Edit" }),
    );
    const bad = await a.client.post({ type: "guard", kind: "scope-conflict", tool: "Write" });
    expect(bad.body.error.code).toBe("INVALID_INPUT"); // the server counts conflicts itself
    const after = await admin.metrics(backend.deps, "acme/shop");
    expect(after.pathGuardCatches - before.pathGuardCatches).toBe(1);
    expect(after.guardRefusals - before.guardRefusals).toBe(2);
  });

  it("status lists the person's open intents with each session's guard status, renewing only the caller", async () => {
    const a = await published(aliceToken, "status-work", "Status work");
    ok(
      "intent",
      await a.client.post({
        type: "intent",
        intentId: a.intentId,
        intent: { objective: "Status objective" },
      }),
    );
    backend.advance(3 * 60_000); // past the silent threshold (2 min), inside the lease
    const doctor = agentClient(backend.url, aliceToken, "status-doctor");
    const status = ok("status", await doctor.post({ type: "status" }));
    const row = status.intents.find((i: any) => i.intentId === a.intentId);
    expect(status.person).toBe("alice");
    expect(row).toMatchObject({
      sessionKey: "status-work",
      guard: "silent",
      objective: "Status objective",
      control: "active",
    });
    expect(status.intents.every((i: any) => i.sessionKey !== "status-doctor")).toBe(true);
    // Asking did not renew the work session's lease.
    expect(
      ok("status", await doctor.post({ type: "status" })).intents.find((i: any) => i.intentId === a.intentId)
        .guard,
    ).toBe("silent");
  });

  it("the session read renews the lease and reports control, nothing else", async () => {
    const { admin } = await import("@cohent/backend");
    const a = await published(aliceToken, "session-read", "Session read");
    const read = async () => {
      const res = await fetch(`${backend.url}/api/agent/session`, {
        headers: { authorization: `Bearer ${aliceToken}`, "x-cohent-session": "session-read" },
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect(ok("session", await read())).toEqual({ control: "active", controlReason: null, notices: 0 });
    const sessionId = (
      await backend.deps.db.prisma.session.findFirstOrThrow({ where: { key: "session-read" } })
    ).id;
    await admin.controlSession(backend.deps, {
      sessionId,
      kind: "cancel",
      actor: "dana",
      reason: "stop now",
    });
    expect(ok("session", await read())).toEqual({
      control: "cancelled",
      controlReason: "stop now",
      notices: 0,
    });
    const events = await backend.deps.db.prisma.event.count({ where: { intentId: a.intentId } });
    await read();
    expect(await backend.deps.db.prisma.event.count({ where: { intentId: a.intentId } })).toBe(events);
    const unauth = await fetch(`${backend.url}/api/agent/session`, { headers: { "x-cohent-session": "s" } });
    expect(unauth.status).toBe(401);
  });

  it("ack records the injected characters once per packet", async () => {
    const a = await published(aliceToken, "ack", "Ack me");
    const first = ok(
      "ack",
      await a.client.post({ type: "ack", packetId: a.packet.id, chars: a.packet.chars }),
    );
    expect(first.chars).toBe(a.packet.chars);
    const twice = await a.client.post({ type: "ack", packetId: a.packet.id, chars: 5 });
    expect([twice.status, twice.body.error.code]).toEqual([409, "PACKET_ALREADY_ACKED"]);
    const foreign = await agentClient(backend.url, bobToken, "ack-other").post({
      type: "ack",
      packetId: a.packet.id,
      chars: 1,
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "PACKET_NOT_FOUND"]);
    const row = await backend.deps.db.prisma.packet.findUniqueOrThrow({ where: { id: a.packet.id } });
    expect(row.ackedChars).toBe(a.packet.chars);
  });

  it("only the owning session may act on an intent", async () => {
    const a = await published(aliceToken, "own-1", "Mine");
    const other = agentClient(backend.url, aliceToken, "own-2");
    const r = await other.post({ type: "scope", intentId: a.intentId, paths: ["x"] });
    expect([r.status, r.body.error.code]).toEqual([403, "NOT_INTENT_OWNER"]);
  });

  it("pause and cancel reach the session on its next call; resume clears them", async () => {
    const { admin } = await import("@cohent/backend");
    const commandsBefore = (await admin.metrics(backend.deps, "acme/shop")).humanCommands;
    const a = await published(aliceToken, "ctl", "Controlled");
    const session = a.client;
    const sessionId = (await backend.deps.db.prisma.session.findFirstOrThrow({ where: { key: "ctl" } })).id;
    await admin.controlSession(backend.deps, { sessionId, kind: "pause", actor: "carol" });
    const polled = await session.poll(a.intentId);
    expect(polled.body.meta.session).toMatchObject({
      control: "paused",
      controlReason: expect.stringContaining("carol"),
    });
    expect(polled.body.data.control).toBe("paused");
    const claim = await session.post({ type: "scope", intentId: a.intentId, paths: ["paused/x"] });
    expect([claim.status, claim.body.error.code, claim.body.meta.session.control]).toEqual([
      423,
      "SESSION_PAUSED",
      "paused",
    ]);
    // Another session of the same token is not affected.
    const sibling = await agentClient(backend.url, aliceToken, "ctl-sibling").post({
      type: "publish",
      prompt: "free",
    });
    expect(sibling.body.meta.session.control).toBe("active");
    await admin.controlSession(backend.deps, { sessionId, kind: "cancel", actor: "carol" });
    expect((await session.post({ type: "scope", intentId: a.intentId, paths: ["x"] })).body.error.code).toBe(
      "SESSION_CANCELLED",
    );
    await admin.controlSession(backend.deps, { sessionId, kind: "resume", actor: "carol" });
    ok("scope", await session.post({ type: "scope", intentId: a.intentId, paths: ["resumed/x"] }));
    expect((await admin.metrics(backend.deps, "acme/shop")).humanCommands - commandsBefore).toBe(3);
  });
});
