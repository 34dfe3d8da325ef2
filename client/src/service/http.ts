import type { IncomingMessage, RequestOptions } from "node:http";
import { http, https } from "../builtins.js";
import { leanExchange, leanTarget, MAX_RESPONSE_BYTES, type Attempt } from "./tcp.js";
import { plainUrl, requestText, type Target, type WireResponse } from "./wire.js";
import { REQUEST_ID_HEADER, WAIT_HEADER } from "@cohent/protocol/bounds";
import { HOST_HEADER } from "@cohent/protocol/hosts";
import type { AgentRequestBody, Envelope } from "@cohent/protocol";
import { fail } from "../envelope.js";
import { adapterVersionVerdict } from "./version.js";

/**
 * The agent API over the lean transport (tcp.ts) or node:http, never fetch:
 * Node 20 loads undici lazily on the first fetch, and that costs a hook more
 * than the whole round trip to a local server. Any transport failure, a
 * non-JSON answer or a 5xx without an envelope becomes
 * CONTROL_PLANE_UNREACHABLE.
 */

export interface AgentConnection {
  service: string;
  token: string;
  session: string;
  /** A sub-agent's id (Claude Code's agent_id): its calls are the parent session's, tagged. */
  agent?: string | null;
  /** The hook's report of its client, as the x-cohent-host value (client.ts reportHost). */
  host?: string | null;
  timeoutMs?: number;
  /** Aborts the request (MCP cancellation, SIGINT in the agent CLI): the answer is CANCELLED. */
  signal?: AbortSignal;
  /**
   * Delivers an agent call in the caller's own process instead of over the network: the backend's
   * /mcp endpoint runs this operation layer beside the agent route (backend http/mcp.ts).
   */
  send?: AgentSender;
}

/** An in-process POST /api/agent: the body, the answer's envelope (failures as envelopes, never a throw). */
export type AgentSender = (body: AgentRequestBody) => Promise<Envelope<any>>;

export const DEFAULT_TIMEOUT_MS =
  Number(process.env.COHENT_TIMEOUT_MS) > 0 ? Number(process.env.COHENT_TIMEOUT_MS) : 8_000;

/** The same exchange through node:http or node:https: any URL, any Node. */
function nodeExchange(
  to: Target,
  method: string,
  headers: Record<string, string>,
  payload?: string,
): Attempt {
  const target = to instanceof URL ? to : new URL(to.href);
  const request = target.protocol === "https:" ? https().request : http().request;
  const opts: RequestOptions = {
    method,
    headers: {
      ...headers,
      ...(payload !== undefined ? { "content-length": String(Buffer.byteLength(payload)) } : {}),
    },
  };
  let req: ReturnType<typeof request> | undefined;
  const done = new Promise<WireResponse>((resolve, reject) => {
    try {
      req = request(target, opts, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let received = 0;
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          received += c.length;
          if (received > MAX_RESPONSE_BYTES) {
            reject(new Error(`an answer larger than ${MAX_RESPONSE_BYTES} bytes`));
            req?.destroy();
          }
        });
        res.on("error", reject);
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      });
    } catch (err) {
      // Refused before sending (an invalid header): its message, as the lean transport reports it.
      return reject(new Error((err as Error).message));
    }
    req.on("error", reject);
    req.end(payload);
  });
  return { done, abort: () => req?.destroy() };
}

/**
 * One attempt: the lean transport (tcp.ts) where it serves this URL, else
 * node:http. A refusal at `localhost`, which the lean one tries as 127.0.0.1
 * only, goes again through node:http, which also tries ::1.
 */
function exchange(
  target: Target,
  method: string,
  headers: Record<string, string>,
  payload?: string,
): Attempt {
  const where = leanTarget(target);
  const lean = where && leanExchange(where, requestText(method, target, headers, payload));
  if (!lean) return nodeExchange(target, method, headers, payload);
  if (target.hostname !== "localhost") return lean;
  let current = lean;
  const done = lean.done.catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ECONNREFUSED") throw err;
    current = nodeExchange(target, method, headers, payload);
    return current.done;
  });
  return { done, abort: () => current.abort() };
}

export async function requestJson(
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  body: unknown,
  operation: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<Envelope<any>> {
  const target = plainUrl(url) ?? new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all = {
    accept: "application/json",
    ...headers,
    ...(payload !== undefined ? { "content-type": "application/json" } : {}),
  };
  const unreachable = (why: string) =>
    fail(
      operation,
      "CONTROL_PLANE_UNREACHABLE",
      `The Cohent service at ${target.origin} cannot be reached (${why}). Start it or fix the service URL in .cohent/project.json; edits and shell commands stay blocked until then.`,
    );
  if (signal?.aborted) return cancelled(operation);
  let attempt: Attempt;
  try {
    attempt = exchange(target, method, all, payload);
  } catch (err) {
    return unreachable((err as Error).message);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<Envelope<any>>((resolve) => {
    timer = setTimeout(() => resolve(unreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    onAbort = () => resolve(cancelled(operation));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  const answered = attempt.done.then(
    ({ status, body }) => {
      try {
        const env = JSON.parse(body.toString("utf8")) as Envelope<any>;
        if (env && env.version === 1 && typeof env.ok === "boolean") return versionWarning(env);
      } catch {
        /* fall through */
      }
      return unreachable(`HTTP ${status} without a Cohent envelope`);
    },
    (err: NodeJS.ErrnoException) => unreachable(err.code ?? err.message),
  );
  // A timeout or a cancel drops the connection; a whole answer leaves it (node:http may keep it alive).
  const env = await Promise.race([answered, stop.then((e) => (attempt.abort(), e))]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener("abort", onAbort);
  return env;
}

function cancelled(operation: string): Envelope<any> {
  return fail(
    operation,
    "CANCELLED",
    "The operation was cancelled; the request to the Cohent service was aborted.",
  );
}

/**
 * One immediate resend when the first attempt surely did not take effect:
 * the server answered DATABASE_UNAVAILABLE (its transaction rolled back), the
 * connection was refused (never delivered), or the instance vanished
 * mid-answer (a load balancer's 502, a reset): a GET reads again, and a
 * write carries its request id (REQUEST_ID_HEADER), so the service runs it
 * once and answers the resend with the first answer. Behind a balancer the
 * resend reaches another instance. A timeout is not resent: the hook's time budget
 * is spent (the caller's next write of the same body may reuse the id).
 */
function resendable(env: Envelope<any>): boolean {
  if (env.ok || env.error.code === "CANCELLED") return false;
  if (env.error.code === "DATABASE_UNAVAILABLE") return true;
  if (env.error.code !== "CONTROL_PLANE_UNREACHABLE") return false;
  if (/\(ECONNREFUSED\)/.test(env.error.message)) return true;
  return /\((ECONNRESET|EPIPE|socket hang up)\)|without a Cohent envelope/.test(env.error.message);
}

/** The wait an instance at capacity asked for (OVERLOADED's retryAfterSeconds), in ms; null for any other answer. */
export function overloadedWaitMs(env: Envelope<any>): number | null {
  if (env.ok || env.error.code !== "OVERLOADED") return null;
  const s = Number((env.error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds);
  return Number.isFinite(s) && s > 0 ? Math.min(s, 5) * 1000 : 1000;
}

/**
 * The one resend above; then, while the instance answers OVERLOADED, its Retry-After waited and the
 * call sent again, as long as the wait still ends within `budgetMs` of the first send (the request's
 * own timeout, so a hook keeps its deadline). A write resent carries its request id: it runs once.
 */
async function withResends(send: () => Promise<Envelope<any>>, budgetMs: number): Promise<Envelope<any>> {
  const start = Date.now();
  let env = await send();
  if (resendable(env)) env = await send();
  for (let wait = overloadedWaitMs(env); wait !== null; wait = overloadedWaitMs(env)) {
    if (Date.now() - start + wait >= budgetMs) break;
    await new Promise((r) => setTimeout(r, wait));
    env = await send();
  }
  return env;
}

let drawn = 0;
const random10 = () => Math.random().toString(36).slice(2).padEnd(10, "0").slice(0, 10);
/**
 * A fresh request id: one per logical write, sent again on each of its retries. Unique, not secret (it
 * is scoped to the token): the time, the process, a count and ~100 random bits, without node:crypto,
 * which would load the stream modules into every hook process.
 */
export const newRequestId = (): string =>
  `${Date.now().toString(36)}-${process.pid.toString(36)}-${(++drawn).toString(36)}-${random10()}${random10()}`;

function agentHeaders(c: AgentConnection): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${c.token}`, "x-cohent-session": c.session };
  if (c.agent) h["x-cohent-agent"] = c.agent;
  if (c.host) h[HOST_HEADER] = c.host;
  return h;
}

let versionSaid = false;
/** An adapter older than the server accepts, or newer than the server: said once per process, on stderr and in the envelope. */
function versionWarning(env: Envelope<any>): Envelope<any> {
  const v = adapterVersionVerdict(env.meta);
  if (!v || v.status === "ok") return env;
  if (!versionSaid) process.stderr.write(`cohent: ${v.detail}\n`);
  versionSaid = true;
  return { ...env, warnings: [...(env.warnings ?? []), v.detail] };
}

/**
 * POST /api/agent. Every call carries a request id (`requestId`, else a fresh one), the same on its
 * resend: a write the service took although its answer was lost is not run again.
 */
export function postAgent(
  c: AgentConnection,
  body: AgentRequestBody,
  requestId: string = newRequestId(),
): Promise<Envelope<any>> {
  if (c.send) return c.send(body);
  const headers = { ...agentHeaders(c), [REQUEST_ID_HEADER]: requestId };
  return withResends(
    () => requestJson("POST", `${c.service}/api/agent`, headers, body, body.type, c.timeoutMs, c.signal),
    c.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
}

/** The poll; with `waitSeconds` (at most BOUNDS.waitSeconds) a long-poll that answers at the first change. */
export function pollAgent(
  c: AgentConnection,
  intentId: string,
  cursor?: string,
  waitSeconds = 0,
): Promise<Envelope<any>> {
  const h = {
    ...agentHeaders(c),
    "x-cohent-intent": intentId,
    ...(cursor ? { "x-cohent-cursor": cursor } : {}),
    ...(waitSeconds > 0 ? { [WAIT_HEADER]: String(waitSeconds) } : {}),
  };
  // A long-poll holds the answer up to its wait: the timeout starts after it.
  const timeoutMs = waitSeconds > 0 ? waitSeconds * 1000 + (c.timeoutMs ?? DEFAULT_TIMEOUT_MS) : c.timeoutMs;
  return withResends(
    () => requestJson("GET", `${c.service}/api/agent`, h, undefined, "poll", timeoutMs, c.signal),
    c.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
}

/** The kill-switch read: renews the lease and reports control; no resolver run on the server. */
export function sessionRead(c: AgentConnection): Promise<Envelope<any>> {
  return withResends(
    () =>
      requestJson(
        "GET",
        `${c.service}/api/agent/session`,
        agentHeaders(c),
        undefined,
        "session",
        c.timeoutMs,
        c.signal,
      ),
    c.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
}

export function health(service: string, timeoutMs?: number): Promise<Envelope<any>> {
  return requestJson("GET", `${service}/healthz`, {}, undefined, "health", timeoutMs);
}
