import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { initializeBody, rawMcp } from "./http-helpers.js";

/**
 * /mcp against what a hostile or broken client sends: each is refused with
 * a 4xx and a JSON-RPC error that carries the Cohent code, never a 5xx, a
 * crash or a hang, and the server answers normally afterwards.
 */

let backend: TestBackend, token: string, sessionId: string;
const auth = () => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  backend = await startBackend({ kind: "sqlite" });
  await backend.addRepo("acme/shop");
  token = await backend.issueToken("acme/shop", "mallory");
  const init = await rawMcp(backend.url, { body: initializeBody(), headers: auth() });
  expect(init.status).toBe(200);
  sessionId = init.headers.get("mcp-session-id")!;
  expect(sessionId).toBeTruthy();
});
afterAll(() => backend?.stop());

const call = (method: string, params: unknown = {}, id: unknown = 2) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("/mcp refuses hostile input", () => {
  const cases: [string, () => Parameters<typeof rawMcp>[1], number, string | number][] = [
    ["no Authorization", () => ({ body: initializeBody() }), 401, "UNAUTHENTICATED"],
    [
      "an unknown token",
      () => ({ body: initializeBody(), headers: { authorization: "Bearer cht_nope" } }),
      401,
      "UNAUTHENTICATED",
    ],
    [
      "a foreign Origin (DNS rebinding)",
      () => ({ body: initializeBody(), headers: { ...auth(), origin: "http://evil.example.com" } }),
      403,
      "FORBIDDEN",
    ],
    [
      "an Origin that is not a URL",
      () => ({ body: initializeBody(), headers: { ...auth(), origin: "null" } }),
      403,
      "FORBIDDEN",
    ],
    ["malformed JSON", () => ({ body: '{"jsonrpc":"2.0",', headers: auth() }), 400, "INVALID_JSON"],
    ["a JSON string, not a message", () => ({ body: '"initialize"', headers: auth() }), 400, "INVALID_JSON"],
    [
      "a body over the bound",
      () => ({ body: initializeBody().replace("raw-client", "x".repeat(200_000)), headers: auth() }),
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    [
      "a gzip bomb",
      () => ({
        body: gzipSync(Buffer.alloc(50_000_000, 32)),
        headers: { ...auth(), "content-encoding": "gzip" },
      }),
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    [
      "text/plain",
      () => ({ body: initializeBody(), headers: { ...auth(), "content-type": "text/plain" } }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    [
      "no session id after initialize",
      () => ({ body: call("tools/list"), headers: auth() }),
      400,
      "INVALID_INPUT",
    ],
    [
      "a forged session id",
      () => ({
        body: call("tools/list"),
        headers: { ...auth(), "mcp-session-id": "eyJuIjoieCJ9.AAAAAAAAAAAAAAAAAAAAAA" },
      }),
      404,
      "NOT_FOUND",
    ],
    [
      "a session id of absurd length",
      () => ({ body: call("tools/list"), headers: { ...auth(), "mcp-session-id": "a".repeat(4000) } }),
      404,
      "NOT_FOUND",
    ],
    [
      "a JSON-RPC object that is no message",
      () => ({ body: JSON.stringify({ hello: 1 }), headers: { ...auth(), "mcp-session-id": sessionId } }),
      400,
      -32700,
    ],
    [
      "a batch of garbage",
      () => ({
        body: JSON.stringify([1, "x", null, {}]),
        headers: { ...auth(), "mcp-session-id": sessionId },
      }),
      400,
      -32700,
    ],
    [
      "an unsupported protocol version",
      () => ({
        body: call("tools/list"),
        headers: { ...auth(), "mcp-session-id": sessionId, "mcp-protocol-version": "1999-01-01" },
      }),
      400,
      -32000,
    ],
    [
      "no Accept for both JSON and SSE",
      () => ({
        body: call("tools/list"),
        headers: { ...auth(), "mcp-session-id": sessionId, accept: "text/html" },
      }),
      406,
      -32000,
    ],
    [
      "a GET stream",
      () => ({ method: "GET", headers: { ...auth(), accept: "text/event-stream" } }),
      405,
      "METHOD_NOT_ALLOWED",
    ],
    ["PUT", () => ({ method: "PUT", body: "{}", headers: auth() }), 405, "METHOD_NOT_ALLOWED"],
  ];

  it.each(cases)("%s", async (_name, init, status, code) => {
    const r = await rawMcp(backend.url, init());
    expect(r.status).toBe(status);
    expect(r.json.jsonrpc).toBe("2.0");
    if (typeof code === "string") expect(r.json.error.data.code).toBe(code);
    else expect(r.json.error.code).toBe(code);
  });

  it("answers a tool's bad arguments, an unknown tool, NUL characters and deep nesting as tool failures", async () => {
    const tool = async (name: string, args: unknown) => {
      const r = await rawMcp(backend.url, {
        body: call("tools/call", { name, arguments: args }),
        headers: { ...auth(), "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      });
      expect(r.status).toBe(200);
      expect(r.json.result.isError).toBe(true);
      return r.json.result.structuredContent;
    };
    expect((await tool("publish", { prompt: 42 })).error.code).toBe("INVALID_INPUT");
    expect((await tool("publish", { prompt: "x", extra: 1 })).error.code).toBe("INVALID_INPUT");
    expect((await tool("rm-rf", {})).error.code).toBe("INVALID_INPUT");
    expect((await tool("commit", { message: "m" })).error.code).toBe("INVALID_INPUT");
    expect((await tool("publish", { prompt: "a\u0000b" })).error.code).toBe("INVALID_INPUT");
    let deep: unknown = "x";
    for (let i = 0; i < 2000; i++) deep = { a: deep };
    expect((await tool("intent", { intent: deep })).error.code).toBe("INVALID_INPUT");
    expect((await tool("scope", { paths: ["/etc/passwd"] })).error.code).toBe("INVALID_PATH");
  });

  it("answers a browser client on an allowed origin with CORS, its preflight included", async () => {
    const origin = "http://localhost:6274";
    const pre = await rawMcp(backend.url, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(origin);
    expect(pre.headers.get("access-control-allow-headers")).toContain("mcp-session-id");
    const init = await rawMcp(backend.url, { body: initializeBody(), headers: { ...auth(), origin } });
    expect(init.status).toBe(200);
    expect(init.headers.get("access-control-expose-headers")).toBe("mcp-session-id");
  });

  it("answers a notification with 202 and still serves a well-formed call afterwards", async () => {
    const note = await rawMcp(backend.url, {
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      headers: { ...auth(), "mcp-session-id": sessionId },
    });
    expect(note.status).toBe(202);
    const list = await rawMcp(backend.url, {
      body: call("tools/list"),
      headers: { ...auth(), "mcp-session-id": sessionId },
    });
    expect(list.status).toBe(200);
    expect(list.json.result.tools.length).toBe(6);
    expect((await fetch(`${backend.url}/healthz`)).status).toBe(200);
  });
});

describe("/mcp and the agent API's rate limit", () => {
  let limited: TestBackend, secret: string;
  beforeAll(async () => {
    const before = process.env.COHENT_RATE_LIMIT;
    process.env.COHENT_RATE_LIMIT = "0.1/3";
    try {
      limited = await startBackend({ kind: "sqlite" });
    } finally {
      if (before === undefined) delete process.env.COHENT_RATE_LIMIT;
      else process.env.COHENT_RATE_LIMIT = before;
    }
    await limited.addRepo("acme/shop");
    secret = await limited.issueToken("acme/shop", "flood");
  });
  afterAll(() => limited?.stop());

  it("refuses a token's flood with 429 RATE_LIMITED and Retry-After, counted with its /api/agent calls", async () => {
    const headers = { authorization: `Bearer ${secret}` };
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++)
      statuses.push((await rawMcp(limited.url, { body: initializeBody(), headers })).status);
    // The same bucket as the agent API: a call there takes from it too.
    const agent = await fetch(`${limited.url}/api/agent/session`, {
      headers: { ...headers, "x-cohent-session": "s1" },
    });
    statuses.push(agent.status);
    const refused = await rawMcp(limited.url, { body: initializeBody(), headers });
    expect(statuses).toEqual([200, 200, 200]);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(refused.json.error.data.code).toBe("RATE_LIMITED");
  });
});
