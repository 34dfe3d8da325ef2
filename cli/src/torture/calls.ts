import { randomBytes } from "node:crypto";
import type { OpName, OpRecord } from "./history.js";

/**
 * One recorded HTTP call of the torture, and its retries. Every attempt is an operation of the history
 * (invoked, answered or not); a write carries its idempotency key on every attempt, as the adapter does.
 */

/** Milliseconds since the run started, on the wall clock every process of the run shares. */
export const clockFrom = (startedAt: number) => () => performance.timeOrigin + performance.now() - startedAt;

export interface Recorder {
  now(): number;
  record(op: OpRecord): void;
  /** Ids unique in the run: the process's prefix and a counter. */
  nextId(): string;
}

export interface CallSpec {
  process: string;
  session: string;
  op: OpName;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: unknown;
  write?: string;
  args: OpRecord["args"];
  timeoutMs: number;
}

export interface Answer {
  outcome: OpRecord["outcome"];
  status?: number;
  code?: string;
  retryable?: boolean;
  data?: any;
  epoch?: number;
  control?: string;
  sessionId?: string;
  retryAfterMs?: number;
}

export async function callOnce(rec: Recorder, instance: string, spec: CallSpec): Promise<Answer> {
  const id = rec.nextId();
  const invokeAt = rec.now();
  let answer: Answer;
  try {
    const headers: Record<string, string> = { ...spec.headers };
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    if (spec.write) headers["idempotency-key"] = spec.write;
    const res = await fetch(instance + spec.path, {
      method: spec.method,
      headers,
      ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
      signal: AbortSignal.timeout(spec.timeoutMs),
      redirect: "manual",
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      /* not an envelope: a proxy's page, a cut body */
    }
    const retryAfter = Number(res.headers.get("retry-after"));
    const session = body?.meta?.session;
    answer = {
      outcome: body?.ok ? "ok" : "fail",
      status: res.status,
      ...(body && !body.ok ? { code: body.error?.code, retryable: !!body.error?.retryable } : {}),
      ...(!body ? { code: `HTTP_${res.status}`, retryable: res.status >= 500 } : {}),
      data: body?.data,
      ...(typeof session?.epoch === "number" ? { epoch: session.epoch } : {}),
      ...(session?.control ? { control: session.control } : {}),
      ...(session?.id ? { sessionId: session.id } : {}),
      ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  } catch (err) {
    // A refused connection sent nothing: surely not done. Anything else may have reached the server.
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    answer =
      cause === "ECONNREFUSED"
        ? { outcome: "fail", code: "ECONNREFUSED", retryable: true }
        : {
            outcome: "unknown",
            code: (err as Error).name === "TimeoutError" ? "TIMEOUT" : (cause ?? "CONNECTION"),
          };
  }
  const completeAt = answer.outcome === "unknown" ? null : rec.now();
  const data = answer.data;
  rec.record({
    kind: "op",
    id,
    process: spec.process,
    session: spec.session,
    instance,
    op: spec.op,
    ...(spec.write ? { write: spec.write } : {}),
    args: spec.args,
    invokeAt,
    completeAt,
    outcome: answer.outcome,
    ...(answer.status !== undefined ? { status: answer.status } : {}),
    ...(answer.code !== undefined ? { code: answer.code } : {}),
    ...(answer.retryable !== undefined ? { retryable: answer.retryable } : {}),
    ...(answer.epoch !== undefined ? { epoch: answer.epoch } : {}),
    ...(data && typeof data === "object"
      ? {
          result: {
            ...(typeof data.intentId === "string" ? { intentId: data.intentId } : {}),
            ...(Array.isArray(data.paths) ? { paths: data.paths } : {}),
            ...(typeof data.action === "string" ? { action: data.action } : {}),
          },
        }
      : {}),
  });
  return answer;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Codes a client sends again: the retryable answers, and no answer at all. */
const again = (a: Answer) =>
  a.outcome === "unknown" ||
  (a.outcome === "fail" &&
    a.retryable === true &&
    a.code !== "SCOPE_CONFLICT" &&
    a.code !== "SESSION_PAUSED");

/**
 * A call with up to `attempts` tries: a retryable answer or none is sent again (a write with the same
 * key), to the next instance when the one asked did not answer or was overloaded, after Retry-After
 * (at most 2 s) or a short pause.
 */
export async function callRetrying(
  rec: Recorder,
  instances: string[],
  first: number,
  spec: CallSpec,
  attempts = 3,
  until = Infinity,
): Promise<Answer & { instance: number }> {
  let at = first;
  for (let i = 0; ; i++) {
    const a = await callOnce(rec, instances[at % instances.length]!, spec);
    if (!again(a) || i + 1 >= attempts || rec.now() >= until) return { ...a, instance: at };
    if (a.outcome === "unknown" || ["ECONNREFUSED", "OVERLOADED", "DATABASE_UNAVAILABLE"].includes(a.code!))
      at++;
    await sleep(Math.min(2_000, a.retryAfterMs ?? 200 + Math.random() * 300));
  }
}

export const writeKey = (prefix: string) => `${prefix}.${randomBytes(8).toString("hex")}`;
