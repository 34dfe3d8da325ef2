import { createHmac, randomBytes } from "node:crypto";
import type { Context, Middleware } from "koa";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, type InitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  BOUNDS,
  CohentError,
  failure,
  REMOTE_WIRING,
  success,
  UNKNOWN_HOST,
  type Envelope,
  type HostReport,
} from "@cohent/protocol";
import { type AgentSender, endScope, perform, emptySession, SessionFile } from "@cohent/client";
import { INSTRUCTIONS, REMOTE_OPERATIONS, SERVER_INFO, serveTools } from "@cohent/mcp-server/tools.js";
import { authenticate, sessionMeta } from "../operations/agent/index.js";
import { bearerSecret } from "../operations/agent/session.js";
import type { Caller, Deps } from "../operations/deps.js";
import { agentPost } from "./agent.js";
import { assertNoNul } from "./body.js";
import { baseMeta, knownError } from "./envelope.js";

/**
 * /mcp: MCP's Streamable HTTP transport, for agents that run away from the
 * checkout (cloud agents, remote IDEs). The tools are the stdio server's
 * (mcp-server tools.ts, without `commit`), answered by the same client
 * operation layer (client/src/operations.ts), whose agent calls go in-process
 * to the agent route's operations instead of over the network: the same
 * envelopes, warnings and packet acknowledgements as over stdio.
 *
 * Stateless across instances: the Mcp-Session-Id the server issues at
 * initialize carries the client's name and version and a nonce, sealed with
 * an HMAC keyed by the agent token's secret. Any instance sharing the
 * database verifies it without a lookup, derives the Cohent session key from
 * it, and reads everything else (the open intent, its scope, pause and
 * cancel) from the database on each call. Nothing lives in one instance's
 * memory, so a balancer may send each request anywhere. Each POST gets a
 * fresh SDK server and transport that answer it with JSON (no SSE stream:
 * no tool sends progress, and a GET stream would pin a client to an
 * instance); GET answers 405, and DELETE releases the session's claim.
 */

export interface McpOptions {
  /** COHENT_PUBLIC_URL: browsers on the deployed origin may call. */
  publicUrl?: string | null;
  /** COHENT_MCP_ORIGINS: further origins (comma-separated) a browser-based client may call from. */
  origins?: readonly string[];
}

const SESSION_ID = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

interface McpSession {
  /** The client as initialize's clientInfo named it (title, else name), and its version. */
  client: string | null;
  version: string | null;
  nonce: string;
}

const mac = (secret: string, payload: string) =>
  createHmac("sha256", secret).update(`cohent-mcp:${payload}`).digest("base64url").slice(0, 22);

function issueSessionId(secret: string, s: McpSession): string {
  const payload = Buffer.from(JSON.stringify({ c: s.client, v: s.version, n: s.nonce })).toString(
    "base64url",
  );
  return `${payload}.${mac(secret, payload)}`;
}

/** The session an Mcp-Session-Id names, when this token issued it; null otherwise (answered 404). */
function readSessionId(secret: string, id: string): McpSession | null {
  const m = SESSION_ID.exec(id);
  if (!m || mac(secret, m[1]!) !== m[2]) return null;
  try {
    const p = JSON.parse(Buffer.from(m[1]!, "base64url").toString("utf8")) as {
      c?: unknown;
      v?: unknown;
      n?: unknown;
    };
    if (typeof p.n !== "string") return null;
    return {
      client: typeof p.c === "string" ? p.c : null,
      version: typeof p.v === "string" ? p.v : null,
      nonce: p.n,
    };
  } catch {
    return null;
  }
}

/** The Cohent session key of an MCP session: `mcp-<client>-<nonce>`, like the stdio server's `mcp-<client>-<pid>`. */
export function sessionKeyOf(s: McpSession): string {
  const slug =
    (s.client ?? "client")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "client";
  return `mcp-${slug}-${s.nonce}`;
}

const clip = (v: string | undefined, n: number) => (v ? v.slice(0, n) : null);

/** What the session reports of itself: no hook runs where it edits (core/enforcement: advisory, remote). */
const remoteReport = (s: McpSession): HostReport => ({
  host: UNKNOWN_HOST,
  hostVersion:
    (s.version ?? "")
      .replace(/[^A-Za-z0-9._+-]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, BOUNDS.hostVersionChars) || null,
  wiring: REMOTE_WIRING,
});

/** A JSON-RPC error answer for what fails before the MCP layer: stable HTTP status, the Cohent code in data. */
function rpcError(ctx: Context, err: CohentError, rpcCode = -32000): void {
  ctx.status = err.status;
  ctx.body = {
    jsonrpc: "2.0",
    id: null,
    error: { code: rpcCode, message: err.message, data: { code: err.code, retryable: err.retryable } },
  };
}

const RPC_CODES: Partial<Record<string, number>> = {
  INVALID_JSON: -32700,
  PAYLOAD_TOO_LARGE: -32600,
  INVALID_INPUT: -32600,
};

export function allowedOrigin(origin: string, opts: McpOptions): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (LOOPBACK.has(url.hostname)) return true;
  const allowed = [opts.publicUrl, ...(opts.origins ?? [])].filter(Boolean).map((o) => {
    try {
      return new URL(o!).origin;
    } catch {
      return null;
    }
  });
  return allowed.includes(url.origin);
}

export function mcpOptionsFromEnv(publicUrl: string | undefined, env = process.env): McpOptions {
  const origins = (env.COHENT_MCP_ORIGINS ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  return { publicUrl: publicUrl ?? null, origins };
}

/**
 * The endpoint. `body` reads the JSON body (body.ts: bounds, encodings, INVALID_JSON); `limit` is the
 * agent API's rate limit, per bearer token. Every refusal before the MCP layer is a JSON-RPC error
 * with a 4xx status; nothing a client sends reaches a 5xx but the database being down.
 */
export function mcpRoute(deps: Deps, body: Middleware, limit: Middleware, opts: McpOptions): Middleware {
  const handle = async (ctx: Context) => {
    // DNS rebinding: a browser page on another origin must not reach the tools (no Origin: not a browser).
    const origin = ctx.get("origin");
    if (origin && !allowedOrigin(origin, opts))
      throw new CohentError(
        "FORBIDDEN",
        `Origin ${origin.slice(0, 100)} may not call /mcp; set COHENT_MCP_ORIGINS to allow a browser client's origin.`,
      );
    if (origin) {
      // A browser client on an allowed origin (the MCP Inspector on loopback, the Control Room's origin): CORS.
      ctx.set("Access-Control-Allow-Origin", origin);
      ctx.set("Vary", "Origin");
      ctx.set("Access-Control-Allow-Methods", "POST, DELETE");
      ctx.set(
        "Access-Control-Allow-Headers",
        "authorization, content-type, mcp-session-id, mcp-protocol-version",
      );
      ctx.set("Access-Control-Expose-Headers", "mcp-session-id");
    }
    if (ctx.method === "OPTIONS" || ctx.method === "GET" || !["POST", "DELETE"].includes(ctx.method)) {
      ctx.set("Allow", "POST, DELETE");
      if (ctx.method === "OPTIONS") return void (ctx.status = 204);
      // No server-to-client stream: every answer rides on its POST (see above).
      throw new CohentError(
        "METHOD_NOT_ALLOWED",
        "This server answers each POST directly; it opens no GET stream.",
      );
    }
    const authorization = ctx.get("authorization");
    const secret = bearerSecret(authorization);
    if (!secret) {
      ctx.set("WWW-Authenticate", 'Bearer realm="cohent"');
      throw new CohentError(
        "UNAUTHENTICATED",
        "Send Authorization: Bearer <agent token> (cohent token issue).",
      );
    }
    const sid = ctx.get("mcp-session-id");
    let message: unknown;
    if (ctx.method === "POST") {
      if (!ctx.is("application/json"))
        throw new CohentError("UNSUPPORTED_MEDIA_TYPE", "Send Content-Type: application/json.");
      await body(ctx, async () => undefined);
      message = ctx.request.body;
    }
    const init = ctx.method === "POST" && !Array.isArray(message) && isInitializeRequest(message);
    let session: McpSession | null;
    if (init) {
      const info = (message as InitializeRequest).params.clientInfo;
      session = {
        client: clip(info.title || info.name, BOUNDS.identityChars),
        version: clip(info.version, BOUNDS.hostVersionChars),
        nonce: randomBytes(12).toString("base64url"),
      };
    } else {
      if (!sid)
        throw new CohentError("INVALID_INPUT", "Send the Mcp-Session-Id this server gave at initialize.");
      session = readSessionId(secret, sid);
      if (!session) {
        ctx.status = 404;
        ctx.body = {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32001,
            message: "Session not found: initialize again.",
            data: { code: "NOT_FOUND" },
          },
        };
        return;
      }
    }
    const key = sessionKeyOf(session);
    const report = { report: remoteReport(session), guardCall: false };
    const secretHash = ctx.state.secretHash as string | undefined;
    const caller = await authenticate(deps, authorization, key, secretHash, report);
    if (init && session.client && caller.session.client !== session.client)
      await deps.store.sessions.setClient(caller.session.id, session.client, caller.session.model);

    /** An agent call of the operation layer, in-process: the agent route's operation, its envelope. */
    const send: AgentSender = async (call) => {
      let meta: Record<string, unknown> = baseMeta(deps.clock);
      try {
        assertNoNul(call);
        const who = await authenticate(deps, authorization, key, secretHash, report);
        meta = { ...meta, session: sessionMeta(deps, who) };
        return success(call.type, await agentPost(deps, who, call), meta) as Envelope<any>;
      } catch (err) {
        const known = knownError(err);
        if (known.code === "INTERNAL") deps.log.error({ err }, "unhandled error in an /mcp call");
        return failure(call.type, known, meta) as Envelope<any>;
      }
    };

    if (ctx.method === "DELETE") {
      // The session ends: its claim is released at once (a lapsed lease would free it later).
      const { checkout, session: state } = await remoteContext(deps, caller, session, send);
      await endScope(checkout, state);
      ctx.status = 200;
      ctx.body = "";
      return;
    }

    const gone = new AbortController();
    ctx.res.once("close", () => ctx.res.writableFinished || gone.abort());
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    serveTools(server, REMOTE_OPERATIONS, async (op, input, signal) => {
      checkRepository(caller, input.repo);
      // A client that hangs up mid-call cancels it (its notifications/cancelled would reach another request).
      const both = AbortSignal.any([signal, gone.signal]);
      return perform(op, input, {
        ...(await remoteContext(deps, caller, session, send)),
        signal: both,
      });
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    if (init) ctx.res.setHeader("mcp-session-id", issueSessionId(secret, session));
    ctx.respond = false;
    try {
      await transport.handleRequest(ctx.req, ctx.res, message);
    } finally {
      await server.close().catch(() => undefined);
    }
  };

  return async (ctx) => {
    try {
      ctx.state.operation = "mcp";
      await limit(ctx, () => handle(ctx));
    } catch (err) {
      if (ctx.respond === false) {
        // The transport owned the answer: end it if it did not.
        deps.log.error({ err }, "/mcp failed after the transport took the answer");
        if (!ctx.res.headersSent) ctx.res.writeHead(500, { "content-type": "application/json" });
        ctx.res.end();
        return;
      }
      const known = knownError(err);
      if (known.code === "INTERNAL") deps.log.error({ err }, "unhandled error in /mcp");
      if (known.code === "RATE_LIMITED" || known.code === "DATABASE_UNAVAILABLE")
        ctx.set(
          "Retry-After",
          String((known.details as { retryAfterSeconds?: number })?.retryAfterSeconds ?? 1),
        );
      rpcError(ctx, known, RPC_CODES[known.code]);
    }
  };
}

/** `repo`, when given over /mcp, names the token's repository (owner/name): a call cannot switch it. */
function checkRepository(caller: Caller, repo: string | undefined): void {
  if (repo === undefined) return;
  const name = caller.repo.name;
  const same = caller.repo.caseInsensitive ? repo.toLowerCase() === name.toLowerCase() : repo === name;
  if (!same)
    throw new CohentError(
      "REPOSITORY_MISMATCH",
      `repo ${JSON.stringify(repo.slice(0, 200))} is not this token's repository (${name}); omit repo, or use a token of that repository.`,
    );
}

/**
 * The operation layer's context for one call: a checkout with no root whose calls go to `send`, and
 * the session's state as the database holds it now (its open intent and scope, its control).
 */
async function remoteContext(deps: Deps, caller: Caller, session: McpSession, send: AgentSender) {
  const open = await deps.store.intents.latestOpenOfSession(caller.session.id);
  const seed = {
    ...emptySession(deps.clock()),
    client: session.client,
    model: caller.session.model,
    control: caller.session.control,
    controlReason: caller.session.controlReason,
    epoch: caller.session.epoch,
    ...(open
      ? {
          intentId: open.id,
          action: open.lastAction ?? undefined,
          scope: [...open.scope],
          explicitScope: open.scope.length > 0,
        }
      : {}),
  };
  const key = sessionKeyOf(session);
  return {
    root: "",
    sessionId: key,
    client: session.client,
    surface: "mcp" as const,
    remote: true,
    session: new SessionFile("", key, seed),
    checkout: {
      root: "",
      project: { version: 1 as const, service: "in-process", repository: caller.repo.name },
      token: "",
      send,
    },
  };
}
