import Koa from "koa";
import compose from "koa-compose";
import Router from "@koa/router";
import { CohentError, SERVER_METHODS } from "@cohent/protocol";
import type { Deps } from "../operations/deps.js";
import { consoleConfigFromEnv, type ConsoleConfig } from "../config.js";
import { agentRoutes } from "./agent.js";
import { assertNoNul, jsonBody } from "./body.js";
import { consoleRoutes } from "./console.js";
import { errorEnvelope, reply } from "./envelope.js";
import { mcpOptionsFromEnv, mcpRoute } from "./mcp.js";
import { pairingRoutes } from "./pairing.js";
import { consoleUi } from "./ui.js";
import { localRuntime, type HttpRuntime } from "./runtime.js";
import { byBearer, rateLimited } from "./rate-limit.js";

const READY_TIMEOUT_MS = 2_000;

/** NUL characters in a JSON body are refused for every route (body.ts assertNoNul). */
async function refuseNul(ctx: Koa.Context, next: Koa.Next) {
  assertNoNul(ctx.request.body);
  await next();
}

/** `OPTIONS *` asks what the server does: the methods it answers anywhere. Any other method on `*` is not HTTP. */
async function asterisk(ctx: Koa.Context, next: Koa.Next) {
  if (ctx.url !== "*") return next();
  if (ctx.method !== "OPTIONS")
    throw new CohentError("BAD_REQUEST", "Only OPTIONS takes the request target *.");
  ctx.set("Allow", SERVER_METHODS.join(", "));
  ctx.status = 200;
}

/**
 * Request log lines carry no token, body or prompt: only what and how long. Their fields are fixed, so
 * they skip the logger's redaction by key (2.6 µs a line, a tenth of a kill-switch read's own time).
 */
function accessLog(deps: Deps) {
  const log = deps.log.child({}, { redact: { paths: [] } });
  return async (ctx: Koa.Context, next: Koa.Next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const body = ctx.body as { ok?: boolean; error?: { code?: string } } | undefined;
      log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          operation: ctx.state.operation,
          code: body?.ok === false ? body.error?.code : undefined,
          ms: Math.round(performance.now() - start),
        },
        "request",
      );
    }
  };
}

/** The app factory, separate from listen(), so tests run it on a loopback port with a real store and a controllable clock. */
export function createApp(
  deps: Deps,
  consoleConfig: ConsoleConfig = consoleConfigFromEnv(),
  runtime: HttpRuntime = localRuntime(),
): Koa {
  const app = new Koa({ proxy: false });
  app.use(accessLog(deps));
  app.use(errorEnvelope(deps));
  app.use(asterisk);
  // Each route that takes a body reads it itself, after what its headers decide (body.ts).
  const body = compose<Koa.ParameterizedContext>([jsonBody(), refuseNul]);
  // Agent calls (every guarded tool call) take their own short chain: no other router is matched first.
  const agent = agentRoutes(deps, body);
  // Before the body is read: a flood from one token is refused without parsing or a query.
  const limit = rateLimited(runtime.limits?.token, byBearer);
  app.use((ctx, next) => (ctx.path.startsWith("/api/agent") ? limit(ctx, () => agent(ctx, next)) : next()));
  // MCP over Streamable HTTP for remote agents: the same tools, token and rate limit (mcp.ts).
  const mcp = mcpRoute(deps, jsonBody(), limit, mcpOptionsFromEnv(consoleConfig.publicUrl));
  app.use((ctx, next) => (ctx.path === "/mcp" || ctx.path === "/mcp/" ? mcp(ctx, next) : next()));
  const health = new Router();
  // Liveness: the process answers. Readiness: the database answers too; a balancer sends traffic only to ready instances.
  health.get("/healthz", (ctx) => reply(deps, ctx, "health", { status: "ok" }));
  health.get("/readyz", async (ctx) => {
    ctx.state.operation = "ready";
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error("ETIMEDOUT")), READY_TIMEOUT_MS)),
    );
    try {
      await Promise.race([runtime.ping(), timeout]);
    } catch {
      throw new CohentError("DATABASE_UNAVAILABLE");
    } finally {
      clearTimeout(timer);
    }
    reply(deps, ctx, "ready", { status: "ready" });
  });
  for (const router of [
    health,
    pairingRoutes(deps, consoleConfig, runtime, body),
    consoleRoutes(deps, consoleConfig, body),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  // The Control Room UI: everything that is not /api or /healthz, on the same port.
  app.use(consoleUi(consoleConfig.buildDir));
  return app;
}
