import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUEST_ID_HEADER, REQUEST_ID_RETENTION_HOURS } from "@cohent/protocol";
import { checkpoint as sendCheckpoint, emptySession, postAgent, SessionFile } from "@cohent/client";
import { bodyHash } from "../../backend/src/operations/agent/once.js";
import { hashToken } from "../../backend/src/ids.js";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

// Many writes of one token in a few seconds: the rate limit is not what is tested here.
process.env.COHENT_RATE_LIMIT = "off";

/**
 * Request ids (idempotency-key): a write sent again with the same id runs once and every retry is
 * answered with the first answer, through either of two instances sharing one database; another id
 * runs again; the same id with another body, or a malformed id, is refused with a stable code.
 */
describe.each(DATABASE_KINDS)("request ids (%s)", (kind) => {
  const backends: TestBackend[] = [];
  let token = "";
  let other = "";
  beforeAll(async () => {
    const first = await startBackend({ kind });
    backends.push(first, await startBackend({ databaseUrl: first.deps.db.url }));
    await first.addRepo("acme/retry");
    token = await first.issueToken("acme/retry", "ada");
    other = await first.issueToken("acme/retry", "bob");
  });
  afterAll(async () => {
    await backends[1]?.close();
    await backends[0]?.stop();
  });

  let n = 0;
  const key = () => `retry-test-${kind}-${String(++n).padStart(6, "0")}`;
  const post = async (
    body: unknown,
    requestId: string | null,
    opts: { instance?: number; as?: string; session?: string } = {},
  ) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${opts.as ?? token}`,
      "x-cohent-session": opts.session ?? "retry-s1",
      "content-type": "application/json",
    };
    if (requestId !== null) headers[REQUEST_ID_HEADER] = requestId;
    const res = await fetch(`${backends[opts.instance ?? 0]!.url}/api/agent`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const count = async (table: string, column: string, value: string) =>
    Number(
      (
        await backends[0]!.deps.db.read.get(
          `SELECT COUNT(*) AS n FROM "${table}" WHERE "${column}" = ?`,
          value,
        )
      )?.n,
    );
  const intent = async (session = "retry-s1", as = token) =>
    (await post({ type: "publish", prompt: "retry work" }, null, { session, as })).body.data
      .intentId as string;
  const checkpoint = (intentId: string, summary: string) => ({
    type: "checkpoint",
    intentId,
    status: "working",
    summary,
  });

  it("a retried checkpoint is stored once and answered with the first answer, on either instance", async () => {
    const intentId = await intent();
    const id = key();
    const first = await post(checkpoint(intentId, "step one"), id);
    expect(first.status).toBe(200);
    const again = await post(checkpoint(intentId, "step one"), id);
    const elsewhere = await post(checkpoint(intentId, "step one"), id, { instance: 1 });
    expect(again.status).toBe(200);
    expect(elsewhere.status).toBe(200);
    // The first answer itself: the same packet, not a second one.
    expect(again.body.data).toEqual(first.body.data);
    expect(elsewhere.body.data).toEqual(first.body.data);
    expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
    // Another id is another write.
    expect((await post(checkpoint(intentId, "step one"), key())).status).toBe(200);
    expect(await count("Checkpoint", "intentId", intentId)).toBe(2);
    // No id: runs each time, as before.
    await post(checkpoint(intentId, "step one"), null);
    await post(checkpoint(intentId, "step one"), null);
    expect(await count("Checkpoint", "intentId", intentId)).toBe(4);
  });

  it("duplicates in flight at once run once, through one instance and through two", async () => {
    const intentId = await intent();
    const rounds = 10;
    for (let round = 0; round < rounds; round++) {
      const id = key();
      const body = checkpoint(intentId, `concurrent ${round}`);
      // Four at once: two on each instance.
      const answers = await Promise.all([0, 1, 0, 1].map((instance) => post(body, id, { instance })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      for (const a of answers.slice(1)) expect(a.body.data).toEqual(answers[0]!.body.data);
    }
    expect(await count("Checkpoint", "intentId", intentId)).toBe(rounds);
  });

  it("a refusal taken after its transaction is the first answer too: one queue entry, one catch", async () => {
    const holder = await intent("retry-holder", other);
    expect(
      (
        await post({ type: "scope", intentId: holder, paths: ["src/held"] }, key(), {
          as: other,
          session: "retry-holder",
        })
      ).status,
    ).toBe(200);
    const waiter = await intent("retry-waiter");
    const id = key();
    const body = { type: "scope", intentId: waiter, paths: ["src/held"], queue: true };
    const first = await post(body, id, { session: "retry-waiter" });
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe("SCOPE_CONFLICT");
    const again = await post(body, id, { session: "retry-waiter", instance: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual(first.body.error);
    expect(await count("GuardCatch", "intentId", waiter)).toBe(1);
    expect(await count("ClaimWait", "intentId", waiter)).toBe(1);
  });

  it("a write that failed without writing keeps no record: its retry runs again", async () => {
    const id = key();
    const body = checkpoint("wki_00000000000000000000", "nowhere");
    const first = await post(body, id);
    expect(first.body.error.code).toBe("INTENT_NOT_FOUND");
    expect((await post(body, id)).body.error.code).toBe("INTENT_NOT_FOUND");
    expect(await count("AgentRequest", "key", id)).toBe(0);
  });

  it("the same id with another body is REQUEST_ID_REUSED; another token's same id is its own", async () => {
    const intentId = await intent();
    const id = key();
    expect((await post(checkpoint(intentId, "first body"), id)).status).toBe(200);
    const reused = await post(checkpoint(intentId, "second body"), id);
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe("REQUEST_ID_REUSED");
    expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
    // Bob's own write with the same id runs: ids are per token.
    const bobs = await intent("retry-bob", other);
    expect((await post(checkpoint(bobs, "first body"), id, { as: other, session: "retry-bob" })).status).toBe(
      200,
    );
    expect(await count("Checkpoint", "intentId", bobs)).toBe(1);
  });

  it("a malformed request id is INVALID_INPUT naming the header, and nothing runs", async () => {
    const intentId = await intent();
    for (const bad of ["short", "x".repeat(129), "has space in it ......", "bad/slash/in/the/id"]) {
      const res = await post(checkpoint(intentId, "bad id"), bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ code: "INVALID_INPUT", details: { header: REQUEST_ID_HEADER } });
    }
    expect(await count("Checkpoint", "intentId", intentId)).toBe(0);
  });

  it("an id older than the retention is swept, and the same id then runs again", async () => {
    const intentId = await intent("retry-expiry");
    const id = key();
    const body = checkpoint(intentId, "kept a day");
    expect((await post(body, id, { session: "retry-expiry" })).status).toBe(200);
    expect(await count("AgentRequest", "key", id)).toBe(1);
    // A minute later: still kept, still answered from the first.
    for (const b of backends) b.advance(60_000);
    await backends[0]!.deps.sweeper.sweep();
    expect(await count("AgentRequest", "key", id)).toBe(1);
    expect((await post(body, id, { session: "retry-expiry" })).status).toBe(200);
    expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
    // Past the retention: the sweep deletes it, and the id is new again.
    for (const b of backends) b.advance(REQUEST_ID_RETENTION_HOURS * 3_600_000);
    await backends[0]!.deps.sweeper.sweep();
    expect(await count("AgentRequest", "key", id)).toBe(0);
    expect((await post(body, id, { session: "retry-expiry" })).status).toBe(200);
    expect(await count("Checkpoint", "intentId", intentId)).toBe(2);
  });

  it("a first that took effect but lost its answer: REQUEST_IN_FLIGHT with details.lost, and the agent is not stuck", async () => {
    const intentId = await intent("retry-lost");
    const input = { status: "working" as const, summary: "its instance stopped" };
    const body = checkpoint(intentId, input.summary);
    const checkout = (service: string) => ({
      root: "/nonexistent",
      project: { version: 1 as const, service, repository: "acme/retry" },
      token,
    });
    const session = new SessionFile("/nonexistent", "retry-lost", { ...emptySession(), intentId });
    // The write lands, both answers are cut: the session keeps the id unsettled.
    const proxy = await cuttingProxy(2);
    try {
      expect((await sendCheckpoint(checkout(proxy.service), session, input)).ok).toBe(false);
    } finally {
      await proxy.close();
    }
    const id = session.state.unsettled!.id;
    expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
    // What an instance that stopped between the commit and the answer leaves: the record, no answer,
    // two minutes old (every record is swept first, then this one is written as it would be).
    const store = backends[0]!.deps.store;
    await store.requests.expire(new Date(backends[0]!.deps.clock().getTime() + 60_000));
    const tokenId = (await store.tokens.byHash(hashToken(token)))!.id;
    const at = new Date(backends[0]!.deps.clock().getTime() - 120_000);
    await store.tx((t) => t.requests.begin({ tokenId, key: id, bodyHash: bodyHash(body), at }));
    const res = await post(body, id, { session: "retry-lost" });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "REQUEST_IN_FLIGHT", details: { lost: true } });
    // The agent sends it again: told it was lost for good (it took effect), the session settles it.
    const told = await sendCheckpoint(checkout(backends[0]!.url), session, input);
    expect(told.ok ? null : told.error).toMatchObject({ code: "REQUEST_IN_FLIGHT", details: { lost: true } });
    expect(session.state.unsettled).toBeUndefined();
    expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
  });

  /**
   * A proxy to the first instance that delivers every request but cuts the answer of the first `cut`
   * connections: the write lands, its answer is lost.
   */
  async function cuttingProxy(cut: number) {
    const target = new URL(backends[0]!.url);
    const proxy = { connections: 0, service: "", close: () => Promise.resolve() };
    const server: Server = createServer((client: Socket) => {
      const cutThis = ++proxy.connections <= cut;
      const upstream = connect(Number(target.port), target.hostname);
      client.pipe(upstream);
      client.on("error", () => undefined);
      upstream.on("error", () => client.destroy());
      if (cutThis) upstream.once("data", () => (client.destroy(), upstream.destroy()));
      else upstream.pipe(client);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    proxy.service = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    proxy.close = () => new Promise<void>((r) => server.close(() => r()));
    return proxy;
  }

  it("the adapter's resend after a lost answer carries the same id: stored once, answered", async () => {
    const intentId = await intent("retry-adapter");
    const proxy = await cuttingProxy(1);
    try {
      const env = await postAgent(
        { service: proxy.service, token, session: "retry-adapter", timeoutMs: 5_000 },
        { type: "checkpoint", intentId, status: "working", summary: "answer lost once" },
      );
      expect(proxy.connections).toBe(2);
      expect(env.ok ? env.data.status : env.error).toBe("working");
      expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("an agent that sends an unanswered write again, in a later call, gets the first answer", async () => {
    const intentId = await intent("retry-agent");
    // Both the write and its resend lose their answers: the agent is told the service is unreachable.
    const proxy = await cuttingProxy(2);
    try {
      const checkout = {
        root: "/nonexistent",
        project: { version: 1 as const, service: proxy.service, repository: "acme/retry" },
        token,
      };
      const session = new SessionFile("/nonexistent", "retry-agent", { ...emptySession(), intentId });
      const input = { status: "working" as const, summary: "sent again by the agent" };
      const lost = await sendCheckpoint(checkout, session, input);
      expect(lost.ok ? null : lost.error.code).toBe("CONTROL_PLANE_UNREACHABLE");
      expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
      // The agent sends the same checkpoint again: the same request, answered with the first answer.
      const again = await sendCheckpoint(checkout, session, input);
      expect(again.ok ? again.data.status : again.error).toBe("working");
      expect(proxy.connections).toBe(3);
      expect(await count("Checkpoint", "intentId", intentId)).toBe(1);
      // Answered: settled. The same body once more is a new write.
      expect(session.state.unsettled).toBeUndefined();
      expect((await sendCheckpoint(checkout, session, input)).ok).toBe(true);
      expect(await count("Checkpoint", "intentId", intentId)).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
