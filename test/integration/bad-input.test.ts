import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDS, FailureEnvelope } from "@cohent/protocol";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

describe.each(DATABASE_KINDS)("bad input gets a 4xx with a stable code, never a 5xx (%s)", (kind) => {
  let backend: TestBackend;
  let token: string;
  let otherToken: string;
  let intentId: string;
  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    await backend.addRepo("acme/other");
    token = await backend.issueToken("acme/shop", "alice");
    otherToken = await backend.issueToken("acme/other", "mallory");
    const res = await send({ type: "publish", prompt: "hello" });
    intentId = res.body.data.intentId;
  });
  afterAll(() => backend?.stop());

  async function send(
    body: unknown,
    opts: {
      token?: string | null;
      session?: string | null;
      agent?: string;
      contentType?: string;
      raw?: string;
      method?: string;
      path?: string;
    } = {},
  ) {
    const headers: Record<string, string> = { "content-type": opts.contentType ?? "application/json" };
    const t = opts.token === undefined ? token : opts.token;
    if (t !== null) headers.authorization = `Bearer ${t}`;
    const s = opts.session === undefined ? "bad-input" : opts.session;
    if (s !== null) headers["x-cohent-session"] = s;
    if (opts.agent !== undefined) headers["x-cohent-agent"] = opts.agent;
    const res = await fetch(`${backend.url}${opts.path ?? "/api/agent"}`, {
      method: opts.method ?? "POST",
      headers,
      ...(opts.method === "GET" ? {} : { body: opts.raw ?? JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  // A scope request whose one path the protocol refuses.
  const badPath = (name: string, path: string) => ({
    name,
    run: () => send({ type: "scope", intentId, paths: [path] }),
    status: 400,
    code: "INVALID_PATH",
  });
  const cases: { name: string; run: () => ReturnType<typeof send>; status: number; code: string }[] = [
    {
      name: "malformed JSON",
      run: () => send(null, { raw: '{"type":"publish",' }),
      status: 400,
      code: "INVALID_JSON",
    },
    { name: "a JSON array", run: () => send([1, 2]), status: 400, code: "INVALID_INPUT" },
    {
      name: "not JSON at all",
      run: () => send(null, { raw: "type=publish", contentType: "application/x-www-form-urlencoded" }),
      status: 415,
      code: "UNSUPPORTED_MEDIA_TYPE",
    },
    { name: "unknown type", run: () => send({ type: "delete" }), status: 400, code: "INVALID_INPUT" },
    {
      name: "unknown top-level field",
      run: () => send({ type: "publish", prompt: "x", admin: true }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "unknown nested field",
      run: () => send({ type: "intent", intentId: "wki_abc", intent: { objective: "x", sneaky: 1 } }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "unknown usage field",
      run: () =>
        send({
          type: "intent",
          intentId: "wki_abc",
          intent: { objective: "x" },
          usage: { source: "x", dollars: 1 },
        }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "wrong type",
      run: () => send({ type: "publish", prompt: 42 }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "wrong enum",
      run: () => send({ type: "checkpoint", intentId: "wki_abc", status: "done", summary: "" }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "oversize prompt",
      run: () => send({ type: "publish", prompt: "p".repeat(BOUNDS.promptChars + 1) }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "oversize body",
      run: () => send({ type: "publish", prompt: "p".repeat(BOUNDS.bodyBytes + 10) }),
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
    },
    {
      name: "oversize intent",
      run: () =>
        send({
          type: "intent",
          intentId: "wki_abc",
          intent: {
            objective: "x",
            plan: Array(12).fill("s".repeat(240)),
            outputs: Array(16).fill("o".repeat(64)),
          },
        }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "too many paths",
      run: () =>
        send({
          type: "scope",
          intentId: "wki_abc",
          paths: Array.from({ length: BOUNDS.paths + 1 }, (_, i) => `p${i}`),
        }),
      status: 400,
      code: "INVALID_INPUT",
    },
    badPath("a path that escapes", "../secrets"),
    badPath("an absolute path", "/etc/passwd"),
    badPath("a NUL byte", "a\u0000b"),
    badPath("an empty path", ""),
    {
      name: "a malformed intent id",
      run: () => send({ type: "scope", intentId: "42", paths: ["a"] }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "missing auth",
      run: () => send({ type: "publish", prompt: "x" }, { token: null }),
      status: 401,
      code: "UNAUTHENTICATED",
    },
    {
      name: "a made-up token",
      run: () => send({ type: "publish", prompt: "x" }, { token: "coh_nope" }),
      status: 401,
      code: "UNAUTHENTICATED",
    },
    {
      name: "missing session",
      run: () => send({ type: "publish", prompt: "x" }, { session: null }),
      status: 400,
      code: "INVALID_SESSION",
    },
    {
      name: "malformed session",
      run: () => send({ type: "publish", prompt: "x" }, { session: "a b;c" }),
      status: 400,
      code: "INVALID_SESSION",
    },
    {
      name: "malformed sub-agent header",
      run: () => send({ type: "status" }, { agent: "a b;c" }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "a token from another repository",
      run: () => send({ type: "scope", intentId, paths: ["a"] }, { token: otherToken }),
      status: 404,
      code: "INTENT_NOT_FOUND",
    },
    {
      name: "an unknown intent",
      run: () => send({ type: "scope", intentId: "wki_0000", paths: ["a"] }),
      status: 404,
      code: "INTENT_NOT_FOUND",
    },
    {
      name: "an unknown packet",
      run: () => send({ type: "ack", packetId: "pkt_0000", chars: 1 }),
      status: 404,
      code: "PACKET_NOT_FOUND",
    },
    {
      name: "a negative ack",
      run: () => send({ type: "ack", packetId: "pkt_0000", chars: -1 }),
      status: 400,
      code: "INVALID_INPUT",
    },
    {
      name: "a poll without intent",
      run: () => send(null, { method: "GET" }),
      status: 400,
      code: "INVALID_INPUT",
    },
    { name: "an unknown route", run: () => send({}, { path: "/api/nope" }), status: 404, code: "NOT_FOUND" },
    {
      name: "a wrong method",
      run: () => send(null, { method: "DELETE", path: "/api/agent" }),
      status: 405,
      code: "METHOD_NOT_ALLOWED",
    },
  ];

  it.each(cases)("$name -> $status $code", async ({ run, status, code }) => {
    const res = await run();
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    const envelope = FailureEnvelope.parse(res.body);
    expect(envelope.error.code).toBe(code);
    expect(envelope.error.message.length).toBeGreaterThan(0);
  });

  it("a bad cursor is refused with its own code", async () => {
    const res = await fetch(`${backend.url}/api/agent`, {
      headers: {
        authorization: `Bearer ${token}`,
        "x-cohent-session": "bad-input",
        "x-cohent-intent": intentId,
        "x-cohent-cursor": "yesterday",
      },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("INVALID_CURSOR");
  });

  it("the agent routes: a trailing slash and HEAD as GET; another method 405 with Allow, OPTIONS 200 with it", async () => {
    const headers = { authorization: `Bearer ${token}`, "x-cohent-session": "bad-input" };
    const at = (method: string, path: string) => fetch(`${backend.url}${path}`, { method, headers });
    const slash = await at("GET", "/api/agent/session/");
    expect([slash.status, ((await slash.json()) as any).operation]).toEqual([200, "session"]);
    const head = await at("HEAD", "/api/agent/session");
    expect([head.status, await head.text()]).toEqual([200, ""]);
    const wrong = await at("DELETE", "/api/agent/session");
    expect([wrong.status, ((await wrong.json()) as any).error.code]).toEqual([405, "METHOD_NOT_ALLOWED"]);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD");
    const options = await at("OPTIONS", "/api/agent");
    expect([options.status, options.headers.get("allow")]).toEqual([200, "POST, GET, HEAD"]);
    const unknown = await at("GET", "/api/agent/sessions");
    expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([404, "NOT_FOUND"]);
  });

  it("a revoked token stops working at once", async () => {
    const { admin } = await import("@cohent/backend");
    const issued = await admin.issueToken(backend.deps, { repo: "acme/shop", person: "temp" });
    expect((await send({ type: "publish", prompt: "x" }, { token: issued.token })).status).toBe(200);
    await admin.revokeToken(backend.deps, issued.id);
    expect((await send({ type: "publish", prompt: "x" }, { token: issued.token })).body.error.code).toBe(
      "UNAUTHENTICATED",
    );
  });

  it("tokens are stored hashed, never in plain text", async () => {
    const rows = await backend.deps.db.prisma.agentToken.findMany();
    for (const row of rows) {
      expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(token);
    }
  });
});
