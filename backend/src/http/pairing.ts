import Router from "@koa/router";
import type { Context } from "koa";
import { CohentError } from "@cohent/protocol";
import type { ConsoleConfig } from "../config.js";
import type { Deps } from "../operations/deps.js";
import { pollPairing, startPairing } from "../operations/people/pairing.js";
import { reply } from "./envelope.js";

/** Pairing, the CLI side: no authentication, the device code is the secret. */
export function pairingRoutes(deps: Deps, config: ConsoleConfig): Router {
  const router = new Router({ prefix: "/api/pairing" });
  const json = (name: string, run: (ctx: Context) => Promise<unknown>) => async (ctx: Context) => {
    ctx.state.operation = name;
    if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    reply(deps, ctx, name, await run(ctx));
  };
  router.post("/", json("pairing.start", (ctx) => startPairing(deps, ctx.request.body, config.publicUrl ?? `${ctx.protocol}://${ctx.host}`)));
  router.post("/token", json("pairing.token", (ctx) => pollPairing(deps, ctx.request.body)));
  return router;
}
