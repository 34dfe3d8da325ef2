import type { Context, Middleware, Next } from "koa";
import compose from "koa-compose";
import {
  AgentHeader,
  CohentError,
  HOST_HEADER,
  parseHostHeader,
  PollRequest,
  REQUEST_ID_HEADER,
  RequestIdHeader,
  WAIT_HEADER,
  WaitHeader,
  zodDetails,
  type PollResponse,
} from "@cohent/protocol";
import {
  AGENT_OPERATIONS,
  authenticate,
  poll,
  sessionMeta,
  type AgentOperation,
} from "../operations/agent/index.js";
import { once, WRITES } from "../operations/agent/once.js";
import type { Caller, Deps } from "../operations/deps.js";
import { awaitsContinue } from "./edges.js";
import { named, reply } from "./envelope.js";
import { nextChange, stampOf } from "../live/next-change.js";
import { PerPass } from "../live/per-pass.js";
import { Slots } from "../live/slots.js";

const isOperation = (t: unknown): t is AgentOperation =>
  typeof t === "string" && Object.hasOwn(AGENT_OPERATIONS, t);

/**
 * One POST /api/agent body, for an authenticated caller: the operation's answer (its data), or a
 * CohentError. The route calls it, and the /mcp endpoint's in-process sender (http/mcp.ts).
 */
export async function agentPost(
  deps: Deps,
  caller: Caller,
  body: { type?: unknown },
  /** The write's request id (REQUEST_ID_HEADER), validated: a retry with it gets the first answer (operations/agent/once). */
  requestId?: string | null,
): Promise<unknown> {
  const type = body.type;
  if (!isOperation(type))
    throw new CohentError(
      "INVALID_INPUT",
      `type must be one of ${Object.keys(AGENT_OPERATIONS).join(", ")}.`,
    );
  if (requestId && WRITES.has(type))
    return once(deps, caller, { key: requestId, body }, (d) => dispatch(d, caller, type, body));
  return dispatch(deps, caller, type, body);
}

/** Parses `body` with the schema of the operation `type` and runs it: generic, so the two stay one operation's. */
async function dispatch<K extends AgentOperation>(
  deps: Deps,
  caller: Caller,
  type: K,
  body: unknown,
): Promise<unknown> {
  const operation = AGENT_OPERATIONS[type];
  const parsed = operation.schema.safeParse(body);
  if (!parsed.success) throw new CohentError("INVALID_INPUT", undefined, zodDetails(parsed.error));
  return operation.run(deps, caller, parsed.data);
}

/**
 * A waiting long-poll re-polls at least this often with no hint of a change: a peer's lease lapsing
 * changes answers without an event. Each waiter draws its own interval between three quarters of it
 * and all of it: waiters opened together (200 agents started at once, or reconnecting after a
 * restart) otherwise recheck together at every interval, 200 polls and session reads in one pass,
 * and the requests of that second wait behind them (bench:load's agents trace: a burst of slow
 * requests ten seconds into the window; gone with this on SQLite, kill-switch p99 34.9 → 24.6 ms).
 */
const RECHECK_MS = 10_000;
const recheckInterval = () => RECHECK_MS * (0.75 + 0.25 * Math.random());
/**
 * A waiter woken within this long of its last wake waits out the rest before it looks: each waiter
 * looked at every write (200 waiters, a write every 25 ms: some 8,000 looks a second), and the
 * long-polls' own work was 30 % of the server's CPU in bench:load's agents profile, 10 % with the
 * gap. The first hint after a quiet spell is looked at at once; what concerns the caller reaches it
 * at most this much later.
 */
const WAKE_GAP_MS = 250;
/**
 * Waiters woken together look a few per pass of the event loop (live/per-pass): 100 long-polls woken by one
 * write looked in one pass, and Node takes in one new connection per pass. 200 agents on two instances
 * sharing PostgreSQL, 4 runs each: kill-switch p99 43-78 ms -> 29-49 ms, checkpoint p99 350-941 -> 181-461.
 */
const looks = new PerPass(8);
/** The waiters' session re-reads, a few at a time (live/slots). */
const rechecks = new Slots(2);

/**
 * /api/agent: a thin transport. Authenticate once, parse, call the operation, render the envelope.
 * Three routes, every guarded tool call among them: a table, not a router (matching them took a tenth
 * of a kill-switch read). Paths match with or without a trailing slash, HEAD as GET; a known path
 * with another method answers 405 with Allow (OPTIONS: 200 with Allow); an unknown one goes on (404).
 * `body` reads the JSON body (body.ts): only POST /api/agent takes one.
 */
export function agentRoutes(deps: Deps, body: Middleware): Middleware {
  const routes = new Map<string, Map<string, Middleware>>();
  const route = (method: string, path: string, ...chain: Middleware[]) => {
    const methods = routes.get(path) ?? new Map<string, Middleware>();
    routes.set(path, methods.set(method, compose(chain)));
  };
  /** Agent authentication, one middleware: resolves the caller and renews its lease, for every agent route (once). */
  const authenticated = async (ctx: Context, next: Next) => {
    if (ctx.state.caller) return next();
    const rawHost = ctx.get(HOST_HEADER);
    const host = rawHost ? parseHostHeader(rawHost) : null;
    if (host && "error" in host)
      throw new CohentError("INVALID_INPUT", `${HOST_HEADER}: ${host.error}.`, { header: HOST_HEADER });
    const caller = await authenticate(
      deps,
      ctx.get("authorization"),
      ctx.get("x-cohent-session"),
      ctx.state.secretHash as string | undefined,
      // The hook reads the session (the kill switch) or polls only from the guard, before an edit or shell call.
      { report: host?.report ?? null, guardCall: ctx.method !== "POST" },
    );
    const agent = ctx.get("x-cohent-agent");
    if (agent && !AgentHeader.safeParse(agent).success)
      throw new CohentError(
        "INVALID_INPUT",
        "x-cohent-agent takes letters, digits and . _ : - (at most 128).",
      );
    ctx.state.caller = agent ? { ...caller, agentId: agent } : caller;
    ctx.state.meta = { session: sessionMeta(deps, caller) };
    await next();
  };
  const callerOf = (ctx: Context) => ctx.state.caller as Caller;

  route(
    "POST",
    "/api/agent",
    (ctx, next) => {
      if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
      // A client waiting on Expect: 100-continue is authenticated before it is asked for the body;
      // others as before, after it (a malformed body then costs no lookup).
      return awaitsContinue(ctx.req) ? authenticated(ctx, next) : next();
    },
    body,
    async (ctx, next) => {
      const body = ctx.request.body as { type?: unknown } | undefined;
      if (body === null || typeof body !== "object" || Array.isArray(body))
        throw new CohentError("INVALID_INPUT", "The body must be a JSON object with a type.");
      ctx.state.operation = isOperation(body.type) ? body.type : "agent";
      await next();
    },
    authenticated,
    async (ctx) => {
      const body = ctx.request.body as { type?: unknown };
      const rawId = ctx.get(REQUEST_ID_HEADER);
      const requestId = rawId ? RequestIdHeader.safeParse(rawId) : null;
      if (requestId && !requestId.success)
        throw new CohentError(
          "INVALID_INPUT",
          `${REQUEST_ID_HEADER}: 16 to 128 letters, digits and . _ : -.`,
          { header: REQUEST_ID_HEADER },
        );
      reply(deps, ctx, String(body.type), await agentPost(deps, callerOf(ctx), body, requestId?.data));
    },
  );

  // The kill-switch read for hooks: renews the lease, reports control and the count of untold notices (from memory while none was written or told).
  route("GET", "/api/agent/session", named("session"), authenticated, async (ctx) => {
    const { session, repo } = callerOf(ctx);
    let notices = 0;
    for (const n of (await deps.store.notices.untold(session.id, repo.id)).values()) notices += n;
    reply(deps, ctx, "session", { control: session.control, controlReason: session.controlReason, notices });
  });

  route("GET", "/api/agent", named("poll"), authenticated, async (ctx) => {
    const parsed = PollRequest.safeParse({
      intentId: ctx.get("x-cohent-intent"),
      cursor: ctx.get("x-cohent-cursor") || undefined,
    });
    if (!parsed.success) {
      const onCursor = parsed.error.issues.some((i) => i.path[0] === "cursor");
      throw new CohentError(
        onCursor ? "INVALID_CURSOR" : "INVALID_INPUT",
        onCursor ? undefined : "Send x-cohent-intent: wki_….",
        zodDetails(parsed.error),
      );
    }
    // A cursor from the future would silently skip every change up to it: refuse it. The cached high-water
    // first, the database when above it: another instance may have given it before its hint reached this one
    // (journal.latestSeq outside a transaction is the cached one, and refused such a cursor).
    const cursor = Number(parsed.data.cursor);
    const repoId = callerOf(ctx).repo.id;
    if (
      cursor > (await deps.store.changes.cursor(repoId)) &&
      cursor > (await deps.store.changes.latest(repoId))
    ) {
      throw new CohentError(
        "INVALID_CURSOR",
        "The cursor is ahead of this repository's change log; poll from the cursor of your last answer, or 0.",
      );
    }
    const rawWait = ctx.get(WAIT_HEADER);
    const wait = rawWait === "" ? { success: true as const, data: 0 } : WaitHeader.safeParse(rawWait);
    if (!wait.success) throw new CohentError("INVALID_WAIT", undefined, zodDetails(wait.error));
    reply(deps, ctx, "poll", await longPoll(ctx, callerOf(ctx), parsed.data, wait.data * 1000));
  });

  /**
   * The long-poll: poll, and while the answer is empty and the session's
   * control unchanged, wait for a change hint of the repository (store/changes:
   * this instance's commits, another's NOTIFY, SQLite's data_version, the backstop) and poll again from the cursor the
   * last answer gave. The cursor query decides; a wake-up only says when to ask.
   */
  async function longPoll(
    ctx: Context,
    caller: Caller,
    req: PollRequest,
    waitMs: number,
  ): Promise<PollResponse> {
    if (waitMs <= 0) return poll(deps, caller, req);
    const deadline = Date.now() + waitMs;
    const closed = new AbortController();
    const onClose = () => closed.abort();
    // The response's close, not the request's: a GET's request closes as soon as it is read.
    ctx.res.once("close", onClose);
    try {
      const repo = [caller.repo.id];
      const changes = deps.store.changes;
      // Not moved by the store's backstop (every 2 s on PostgreSQL): 200 waiters each read their session
      // again at every one, 100 pooled reads a second; what it would catch waits at most for the recheck (RECHECK_MS).
      const controlStamp = () => changes.hinted(caller.repo.id, "control");
      // The stamp is taken before each read: a hint that arrives during the read is not waited for.
      let stamp = stampOf(changes, repo);
      let control = controlStamp();
      let answer = await poll(deps, caller, req);
      let polledAt = Date.now();
      const recheckMs = recheckInterval();
      let wokeAt = -Infinity;
      while (answer.packet === null && Date.now() < deadline && !closed.signal.aborted) {
        if (stampOf(changes, repo) === stamp)
          await nextChange(changes, repo, deadline - Date.now(), closed.signal);
        // At the wait's end the answer goes as it is: the client asks again from the same cursor at once,
        // and that poll reads what this one would (a look at its end was a cursor read, and past the
        // recheck interval a session read and a poll, for each of 200 waits ending together).
        if (closed.signal.aborted || Date.now() >= deadline) break;
        // Woken again soon after the last wake: the rest of the gap first, so that the hints of that
        // time are read at once (a control change does not wait).
        const gap = wokeAt + WAKE_GAP_MS - Date.now();
        if (gap > 0 && controlStamp() === control)
          await nextChange(changes, [], Math.min(gap, deadline - Date.now()), closed.signal);
        if (closed.signal.aborted || Date.now() >= deadline) break;
        await looks.admit();
        wokeAt = Date.now();
        stamp = stampOf(changes, repo);
        const controlMoved = controlStamp() !== control;
        control = controlStamp();
        // A hint with no event past the cursor and no control change (the store's backstop, a peer's
        // unrelated write) needs no poll, except at each recheck for what only time changes: a lapsed lease.
        const moved = (await changes.cursor(caller.repo.id)) > Number(answer.cursor);
        if (!moved && !controlMoved && Date.now() - polledAt < recheckMs) continue;
        // The session row only when its control may have moved (a hint, or the periodic recheck): 200 waiters
        // woken by one peer's write must not each read it.
        const recheck = Date.now() - polledAt >= recheckMs;
        // Two at a time: on PostgreSQL the store's backstop moves every control stamp every 2 s, and 200
        // waiters' reads at once queued the read pool 188 deep behind them (the kill-switch reads with them).
        const session =
          controlMoved || recheck
            ? await rechecks.run(() => deps.store.sessions.get(caller.session.id))
            : null;
        if (
          session &&
          (session.control !== caller.session.control ||
            session.controlReason !== caller.session.controlReason)
        ) {
          caller = {
            ...caller,
            session: { ...caller.session, control: session.control, controlReason: session.controlReason },
          };
          ctx.state.meta = { session: sessionMeta(deps, caller) };
          return {
            ...(await poll(deps, caller, { ...req, cursor: answer.cursor })),
            control: session.control,
          };
        }
        answer = await poll(deps, caller, { ...req, cursor: answer.cursor });
        polledAt = Date.now();
      }
      return answer;
    } finally {
      ctx.res.off("close", onClose);
    }
  }

  return (ctx, next) => {
    const path = ctx.path.length > 1 && ctx.path.endsWith("/") ? ctx.path.slice(0, -1) : ctx.path;
    const methods = routes.get(path);
    if (!methods) return next();
    const handler = methods.get(ctx.method === "HEAD" ? "GET" : ctx.method);
    if (handler) return handler(ctx, next);
    ctx.set("Allow", [...methods.keys(), ...(methods.has("GET") ? ["HEAD"] : [])].join(", "));
    // The error envelope answers OPTIONS with the Allow list, any other method METHOD_NOT_ALLOWED.
    ctx.status = ctx.method === "OPTIONS" ? 200 : 405;
  };
}
