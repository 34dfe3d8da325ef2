import Router from "@koa/router";
import { CohentError, PollRequest, success, zodDetails } from "@cohent/protocol";
import { AGENT_OPERATIONS, authenticate, poll, sessionMeta, type AgentOperation } from "../operations/index.js";
import type { Deps } from "../operations/deps.js";

const isOperation = (t: unknown): t is AgentOperation => typeof t === "string" && Object.hasOwn(AGENT_OPERATIONS, t);

/** /api/agent: a thin transport. Parse, authenticate, call the operation, render the envelope. */
export function agentRoutes(deps: Deps): Router {
  const router = new Router({ prefix: "/api/agent" });

  router.post("/", async (ctx) => {
    if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    const body = ctx.request.body as { type?: unknown } | undefined;
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw new CohentError("INVALID_INPUT", "The body must be a JSON object with a type.");
    ctx.state.operation = isOperation(body.type) ? body.type : "agent";
    const caller = await authenticate(deps, ctx.get("authorization"), ctx.get("x-cohent-session"));
    ctx.state.meta = { session: sessionMeta(deps, caller) };
    if (!isOperation(body.type)) {
      throw new CohentError("INVALID_INPUT", `type must be one of ${Object.keys(AGENT_OPERATIONS).join(", ")}.`);
    }
    const operation = AGENT_OPERATIONS[body.type];
    const parsed = operation.schema.safeParse(body);
    if (!parsed.success) throw new CohentError("INVALID_INPUT", undefined, zodDetails(parsed.error));
    const data = await operation.run(deps, caller, parsed.data as never);
    ctx.body = success(body.type, data, { serverTime: deps.clock().toISOString(), ...ctx.state.meta });
  });

  // The kill-switch read for hooks: renews the lease and reports control, nothing else.
  router.get("/session", async (ctx) => {
    ctx.state.operation = "session";
    const caller = await authenticate(deps, ctx.get("authorization"), ctx.get("x-cohent-session"));
    ctx.state.meta = { session: sessionMeta(deps, caller) };
    ctx.body = success("session", { control: caller.session.control, controlReason: caller.session.controlReason }, { serverTime: deps.clock().toISOString(), ...ctx.state.meta });
  });

  router.get("/", async (ctx) => {
    ctx.state.operation = "poll";
    const caller = await authenticate(deps, ctx.get("authorization"), ctx.get("x-cohent-session"));
    ctx.state.meta = { session: sessionMeta(deps, caller) };
    const parsed = PollRequest.safeParse({ intentId: ctx.get("x-cohent-intent"), cursor: ctx.get("x-cohent-cursor") || undefined });
    if (!parsed.success) {
      const onCursor = parsed.error.issues.some((i) => i.path[0] === "cursor");
      throw new CohentError(onCursor ? "INVALID_CURSOR" : "INVALID_INPUT", onCursor ? undefined : "Send x-cohent-intent: wki_….", zodDetails(parsed.error));
    }
    const data = await poll(deps, caller, parsed.data);
    ctx.body = success("poll", data, { serverTime: deps.clock().toISOString(), ...ctx.state.meta });
  });

  return router;
}
