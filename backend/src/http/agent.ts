import Router from "@koa/router";
import type { Context, Next } from "koa";
import { AgentHeader, CohentError, PollRequest, zodDetails } from "@cohent/protocol";
import { AGENT_OPERATIONS, authenticate, poll, sessionMeta, type AgentOperation } from "../operations/agent/index.js";
import type { Caller, Deps } from "../operations/deps.js";
import { named, reply } from "./envelope.js";

const isOperation = (t: unknown): t is AgentOperation => typeof t === "string" && Object.hasOwn(AGENT_OPERATIONS, t);

/** /api/agent: a thin transport. Authenticate once, parse, call the operation, render the envelope. */
export function agentRoutes(deps: Deps): Router {
  const router = new Router({ prefix: "/api/agent" });
  /** Agent authentication, one middleware: resolves the caller and renews its lease, for every agent route. */
  const authenticated = async (ctx: Context, next: Next) => {
    const caller = await authenticate(deps, ctx.get("authorization"), ctx.get("x-cohent-session"));
    const agent = ctx.get("x-cohent-agent");
    if (agent && !AgentHeader.safeParse(agent).success) throw new CohentError("INVALID_INPUT", "x-cohent-agent takes letters, digits and . _ : - (at most 128).");
    ctx.state.caller = agent ? { ...caller, agentId: agent } : caller;
    ctx.state.meta = { session: sessionMeta(deps, caller) };
    await next();
  };
  const callerOf = (ctx: Context) => ctx.state.caller as Caller;

  router.post(
    "/",
    async (ctx, next) => {
      if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
      const body = ctx.request.body as { type?: unknown } | undefined;
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw new CohentError("INVALID_INPUT", "The body must be a JSON object with a type.");
      ctx.state.operation = isOperation(body.type) ? body.type : "agent";
      await next();
    },
    authenticated,
    async (ctx) => {
      const body = ctx.request.body as { type?: unknown };
      if (!isOperation(body.type)) throw new CohentError("INVALID_INPUT", `type must be one of ${Object.keys(AGENT_OPERATIONS).join(", ")}.`);
      const operation = AGENT_OPERATIONS[body.type];
      const parsed = operation.schema.safeParse(body);
      if (!parsed.success) throw new CohentError("INVALID_INPUT", undefined, zodDetails(parsed.error));
      reply(deps, ctx, body.type, await operation.run(deps, callerOf(ctx), parsed.data as never));
    },
  );

  // The kill-switch read for hooks: renews the lease and reports control, nothing else.
  router.get("/session", named("session"), authenticated, (ctx) => {
    const { control, controlReason } = callerOf(ctx).session;
    reply(deps, ctx, "session", { control, controlReason });
  });

  router.get("/", named("poll"), authenticated, async (ctx) => {
    const parsed = PollRequest.safeParse({ intentId: ctx.get("x-cohent-intent"), cursor: ctx.get("x-cohent-cursor") || undefined });
    if (!parsed.success) {
      const onCursor = parsed.error.issues.some((i) => i.path[0] === "cursor");
      throw new CohentError(onCursor ? "INVALID_CURSOR" : "INVALID_INPUT", onCursor ? undefined : "Send x-cohent-intent: wki_….", zodDetails(parsed.error));
    }
    reply(deps, ctx, "poll", await poll(deps, callerOf(ctx), parsed.data));
  });

  return router;
}
