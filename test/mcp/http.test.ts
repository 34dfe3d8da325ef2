import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { toolList } from "../../mcp-server/src/tools.js";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";
import { connectHttp } from "./http-helpers.js";
import { TOOL_NAMES } from "./helpers.js";

/**
 * A remote agent over /mcp alone, with the SDK's Streamable HTTP client:
 * publish, declare, claim, checkpoint, read the context, be paused, all on
 * a real backend; its session is the Control Room's like any other, named
 * from clientInfo and marked coordinated but unguarded. Two instances on one
 * database: the session opened on one goes on on the other.
 */

const envelope = (r: any) => {
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  return r.structuredContent as any;
};

describe.each(DATABASE_KINDS)("MCP over HTTP (%s)", (kind) => {
  let a: TestBackend, b: TestBackend, token: string, admin: ConsoleClient;
  beforeAll(async () => {
    a = await startBackend({ kind });
    b = await startBackend({ databaseUrl: a.deps.db.url });
    await a.addRepo("acme/shop", "Ship the shop.");
    token = await a.issueToken("acme/shop", "carol");
    admin = await signedInAdmin(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.stop();
  });

  it("lists the stdio server's tools but commit, with the same schemas, within 1,500 tokens, on the newest revision the SDK speaks", async () => {
    const c = await connectHttp(a.url, token);
    try {
      const list = await c.client.listTools();
      expect(list.tools.map((t) => t.name)).toEqual(TOOL_NAMES.filter((n) => n !== "commit"));
      const stdio = new Map(toolList().map((t) => [t.name, t]));
      for (const t of list.tools) expect(t).toEqual(stdio.get(t.name));
      expect(Math.ceil(JSON.stringify(list).length / 4)).toBeLessThanOrEqual(1500);
      expect(c.transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
      expect(c.client.getServerVersion()).toMatchObject({ name: "cohent" });
      expect(c.client.getInstructions()).toContain("Call intent before your first edit");
    } finally {
      await c.close();
    }
  });

  it("publishes, declares, claims, checkpoints and reads the context; shows as coordinated, unguarded; is paused on its next call, on either instance", async () => {
    const c = await connectHttp(a.url, token, { name: "copilot-coding-agent", version: "1.7.0" });
    const sessionId = c.transport.sessionId!;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    try {
      const pub = envelope(
        await c.client.callTool({
          name: "publish",
          arguments: { prompt: "Add a cart page", paths: ["src/cart"] },
        }),
      );
      expect(pub).toMatchObject({ version: 1, ok: true, operation: "publish", data: { action: "plan" } });
      const intentId = pub.data.intentId;
      expect(pub.meta.session.id).toMatch(/^ses_/);

      const intent = envelope(
        await c.client.callTool({
          name: "intent",
          arguments: { intent: { objective: "Cart page", outputs: ["cart-page"], components: ["web"] } },
        }),
      );
      expect(intent).toMatchObject({ ok: true, data: { intentId, action: "proceed" } });

      // The next call lands on the other instance: the session goes on there.
      const onB = await connectHttp(b.url, token, { sessionId });
      const scope = envelope(
        await onB.client.callTool({ name: "scope", arguments: { paths: ["src/cart/**"] } }),
      );
      expect(scope).toMatchObject({ ok: true, data: { paths: ["src/cart/**"] } });
      expect(scope.meta.session.id).toBe(pub.meta.session.id);

      const cp = envelope(
        await c.client.callTool({
          name: "checkpoint",
          arguments: {
            status: "working",
            summary: "skeleton",
            source: { kind: "paths", paths: ["src/cart/page.ts"] },
          },
        }),
      );
      expect(cp).toMatchObject({ ok: true, data: { status: "working" } });
      const staged = envelope(
        await c.client.callTool({
          name: "checkpoint",
          arguments: { status: "working", source: { kind: "staged" } },
        }),
      );
      expect(staged).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
      expect(staged.error.message).toContain('{kind:"paths"');

      const ctx = envelope(await onB.client.callTool({ name: "context", arguments: {} }));
      expect(ctx).toMatchObject({ ok: true, data: { intentId, goal: "Ship the shop." } });
      expect(typeof ctx.data.packet.text).toBe("string");
      const wrongRepo = envelope(
        await c.client.callTool({ name: "context", arguments: { repo: "acme/other" } }),
      );
      expect(wrongRepo).toMatchObject({ ok: false, error: { code: "REPOSITORY_MISMATCH" } });
      expect(
        envelope(await c.client.callTool({ name: "context", arguments: { repo: "acme/shop" } })).ok,
      ).toBe(true);

      // The Control Room: the session, named from clientInfo, coordinated but unguarded.
      const overview = (await admin.get("/api/console/repos/acme/shop")).body.data;
      const work = overview.work.find((w: any) => w.intentId === intentId);
      expect(work).toMatchObject({ client: "copilot-coding-agent", person: "carol" });
      expect(work.enforcement).toMatchObject({
        level: "advisory",
        why: "remote-mcp",
        wiring: "remote",
        hostName: "remote MCP client",
        hostVersion: "1.7.0",
      });
      expect(work.enforcement.reason).toContain("nothing checks its writes");

      const paused = await admin.post(`/api/console/sessions/${work.sessionId}/control`, { kind: "pause" });
      expect(paused.body.data.control).toBe("paused");
      const refused = envelope(
        await onB.client.callTool({ name: "scope", arguments: { paths: ["src/more/**"] } }),
      );
      expect(refused).toMatchObject({ ok: false, error: { code: "SESSION_PAUSED" } });
      expect(refused.meta.session.control).toBe("paused");
      await onB.close();
    } finally {
      await c.close();
    }
  });

  it("answers each of two sessions as its own, and a session id from another token is unknown (404)", async () => {
    const other = await a.issueToken("acme/shop", "dave");
    const c1 = await connectHttp(a.url, token, { name: "one" });
    const c2 = await connectHttp(a.url, other, { name: "two" });
    try {
      const p1 = envelope(await c1.client.callTool({ name: "publish", arguments: { prompt: "one" } }));
      const p2 = envelope(await c2.client.callTool({ name: "publish", arguments: { prompt: "two" } }));
      expect(p1.meta.session.id).not.toBe(p2.meta.session.id);
      // dave's token with carol's session id: refused as unknown; the SDK client reports the 404.
      const stolen = await connectHttp(a.url, other, { sessionId: c1.transport.sessionId! });
      await expect(stolen.client.listTools()).rejects.toThrow(/404|Session not found/);
      await stolen.close().catch(() => undefined);
    } finally {
      await c1.close();
      await c2.close();
    }
  });

  it("releases the session's claim when the client ends the session (DELETE)", async () => {
    const c = await connectHttp(a.url, token, { name: "ender" });
    envelope(await c.client.callTool({ name: "publish", arguments: { prompt: "end me" } }));
    const claimed = envelope(await c.client.callTool({ name: "scope", arguments: { paths: ["docs/**"] } }));
    expect(claimed.ok).toBe(true);
    const scopeOf = async () =>
      (await admin.get("/api/console/repos/acme/shop")).body.data.work.find(
        (w: any) => w.intentId === claimed.data.intentId,
      ).scope;
    expect(await scopeOf()).toEqual(["docs/**"]);
    await c.transport.terminateSession();
    await c.close();
    expect(await scopeOf()).toEqual([]);
  });
});
