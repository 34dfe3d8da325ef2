import type { Context, Next } from "koa";
import {
  CohentError,
  COHENT_VERSION,
  failure,
  MIN_ADAPTER_VERSION,
  success,
  toCohentError,
} from "@cohent/protocol";
import type { Deps } from "../operations/deps.js";
import { isDatabaseUnavailable } from "./unavailable.js";

/** The meta every envelope carries: the server's time and version, the oldest adapter it accepts. */
export const baseMeta = (clock: () => Date) => ({
  serverTime: clock().toISOString(),
  serverVersion: COHENT_VERSION,
  minAdapterVersion: MIN_ADAPTER_VERSION,
});

/** Every envelope's meta, and on agent calls the session. */
const meta = (deps: Deps, ctx: Context) => ({ ...baseMeta(deps.clock), ...(ctx.state.meta ?? {}) });

/** Answers with a v1 success envelope. */
export function reply(deps: Deps, ctx: Context, operation: string, data: unknown): void {
  ctx.body = success(operation, data, meta(deps, ctx));
}

/** Names the operation for the access log and the envelope, success or failure. */
export const named = (name: string) => async (ctx: Context, next: Next) => {
  ctx.state.operation = name;
  await next();
};

/** Maps body-parser errors, which carry an HTTP status but no code, to stable codes; and bytes the database refuses. */
function fromHttpError(err: unknown): CohentError | null {
  // PostgreSQL refuses a NUL or an invalid byte in text (22021, 22P05), and Prisma's query protocol a lone UTF-16
  // surrogate (JSON "unexpected end of hex escape"): the input is at fault, and the transaction rolled back.
  if (
    /invalid byte sequence|unsupported Unicode escape|unexpected end of hex escape|\b22021\b|\b22P05\b/.test(
      String((err as Error)?.message ?? ""),
    )
  )
    return new CohentError("INVALID_INPUT", "A text field holds a character the database cannot store.");
  const e = err as { status?: number; type?: string };
  if (typeof e?.status !== "number") return null;
  if (e.status === 413) return new CohentError("PAYLOAD_TOO_LARGE");
  if (e.status === 415) return new CohentError("UNSUPPORTED_MEDIA_TYPE");
  if (e.status === 400)
    return new CohentError(e.type === "entity.parse.failed" || !e.type ? "INVALID_JSON" : "INVALID_INPUT");
  return null;
}

/** Any failure as the stable code it leaves with (a 500 INTERNAL for what nothing knows). */
export function knownError(err: unknown): CohentError {
  return err instanceof CohentError
    ? err
    : isDatabaseUnavailable(err)
      ? new CohentError("DATABASE_UNAVAILABLE")
      : (fromHttpError(err) ?? toCohentError(err));
}

/** First middleware: every failure leaves as a v1 failure envelope with a stable code; a 500 never leaks its message. */
export function errorEnvelope(deps: Deps) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      const allow = ctx.response.get("Allow");
      // OPTIONS: the routers answer an empty 200 with Allow; it becomes an envelope that lists them too.
      if (ctx.method === "OPTIONS" && ctx.status === 200 && allow && !ctx.body)
        return reply(deps, ctx, "options", { allow: allow.split(/\s*,\s*/) });
      if (ctx.body === undefined && (ctx.status === 404 || ctx.status === 405 || ctx.status === 501)) {
        // A method no router implements (501) on a path none of them has is just an unknown route.
        if (ctx.status === 501 && !allow) ctx.remove("Allow");
        throw new CohentError(
          ctx.status === 404 || (ctx.status === 501 && !allow) ? "NOT_FOUND" : "METHOD_NOT_ALLOWED",
        );
      }
    } catch (err) {
      const known = knownError(err);
      // An operation's own rate limit (release requests) says when to retry, as the transport's does.
      const retryAfter = (known.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
      if (known.code === "RATE_LIMITED" && typeof retryAfter === "number")
        ctx.set("Retry-After", String(retryAfter));
      if (known.code === "DATABASE_UNAVAILABLE") {
        ctx.set("Retry-After", "1");
        deps.log.warn({ err: String(err) }, "database unavailable");
      }
      if (known.code === "INTERNAL") deps.log.error({ err }, "unhandled error");
      ctx.status = known.status;
      ctx.body = failure(String(ctx.state.operation ?? "http"), known, meta(deps, ctx));
    }
  };
}
