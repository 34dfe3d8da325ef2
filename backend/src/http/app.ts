import Koa from "koa";
import Router from "@koa/router";
import { bodyParser } from "@koa/bodyparser";
import { BOUNDS } from "@cohent/protocol";
import type { Deps } from "../operations/deps.js";
import { consoleConfigFromEnv, type ConsoleConfig } from "../config.js";
import { agentRoutes } from "./agent.js";
import { consoleRoutes } from "./console.js";
import { errorEnvelope, reply } from "./envelope.js";
import { pairingRoutes } from "./pairing.js";
import { consoleUi } from "./ui.js";

/** Request log lines carry no token, body or prompt: only what and how long. */
function accessLog(deps: Deps) {
  return async (ctx: Koa.Context, next: Koa.Next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const body = ctx.body as { ok?: boolean; error?: { code?: string } } | undefined;
      deps.log.info({
        method: ctx.method, path: ctx.path, status: ctx.status, operation: ctx.state.operation,
        code: body?.ok === false ? body.error?.code : undefined, ms: Math.round(performance.now() - start),
      }, "request");
    }
  };
}

/** The app factory, separate from listen(), so tests run it on a loopback port with a real store and a controllable clock. */
export function createApp(deps: Deps, consoleConfig: ConsoleConfig = consoleConfigFromEnv()): Koa {
  const app = new Koa({ proxy: false });
  app.use(accessLog(deps));
  app.use(errorEnvelope(deps));
  app.use(bodyParser({ enableTypes: ["json"], jsonLimit: BOUNDS.bodyBytes, encoding: "utf-8" }));
  const health = new Router();
  health.get("/healthz", (ctx) => reply(deps, ctx, "health", { status: "ok" }));
  for (const router of [health, agentRoutes(deps), pairingRoutes(deps, consoleConfig), consoleRoutes(deps, consoleConfig)]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  // The Control Room UI: everything that is not /api or /healthz, on the same port.
  app.use(consoleUi(consoleConfig.buildDir));
  return app;
}
