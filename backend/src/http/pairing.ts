import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { CohentError } from "@cohent/protocol";
import type { ConsoleConfig } from "../config.js";
import type { Deps } from "../operations/deps.js";
import { pollPairing, startPairing } from "../operations/people/pairing.js";
import { reply } from "./envelope.js";
import { rateLimited } from "./rate-limit.js";
import type { HttpRuntime } from "./runtime.js";

/** Pairing, the CLI side: no authentication, the device code is the secret. `body` reads a JSON body (body.ts). */
export function pairingRoutes(
  deps: Deps,
  config: ConsoleConfig,
  runtime: HttpRuntime,
  body: Middleware,
): Router {
  const router = new Router({ prefix: "/api/pairing" });
  // Per pairing request (its device code) when polling, per client address when starting one.
  const limit = runtime.limits?.pairing;
  const perRequest = rateLimited(limit, (ctx) => {
    const code = (ctx.request.body as { deviceCode?: unknown } | undefined)?.deviceCode;
    return typeof code === "string" ? `code:${code.slice(0, 200)}` : `ip:${ctx.ip}`;
  });
  const perAddress = rateLimited(limit, (ctx) => `ip:${ctx.ip}`);
  const json = (name: string, run: (ctx: Context) => Promise<unknown>) => async (ctx: Context) => {
    ctx.state.operation = name;
    if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    reply(deps, ctx, name, await run(ctx));
  };
  router.post(
    "/",
    perAddress,
    body,
    json("pairing.start", (ctx) =>
      startPairing(deps, ctx.request.body, config.publicUrl ?? `${ctx.protocol}://${ctx.host}`),
    ),
  );
  router.post(
    "/token",
    body,
    perRequest,
    json("pairing.token", (ctx) => pollPairing(deps, ctx.request.body)),
  );
  return router;
}
