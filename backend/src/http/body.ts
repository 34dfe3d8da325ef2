import type { IncomingMessage } from "node:http";
import zlib from "node:zlib";
import type { Context, Next } from "koa";
import { BODY_ENCODINGS, BOUNDS, CohentError, bodyEncoding, type BodyEncoding } from "@cohent/protocol";
import { sendContinue } from "./edges.js";

declare module "koa" {
  interface Request {
    /** The parsed JSON body, set by jsonBody() on the routes that take one. */
    body?: unknown;
  }
}

const DECODERS: Record<BodyEncoding, () => zlib.Gunzip | zlib.Inflate> = {
  gzip: () => zlib.createGunzip(),
  // RFC 9110's deflate is the zlib format; raw deflate data is refused as corrupt, not guessed at.
  deflate: () => zlib.createInflate(),
};

/**
 * How long a connection closed on a refusal still takes (and drops) what the client sends. Closed
 * with the client's bytes unread, a socket answers them with a reset, and the reset can discard the
 * answer before the client has read it: a 5 MB body under load got no answer at all. So the server
 * sends its answer and its FIN, drops what still arrives, and closes when the client does or after
 * this long (a lingering close, as nginx does).
 */
export const LINGER_MS = 1_000;

function lingerOnClose(req: IncomingMessage) {
  const socket = req.socket;
  // Node's server ends a `Connection: close` response's socket with destroySoon (after the answer is
  // written); here that becomes a half-close, the rest of the body dropped by the request's dump.
  socket.destroySoon = function lingeringClose(this: typeof socket) {
    const close = () => {
      clearTimeout(timer);
      this.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    this.once("end", close);
    this.end();
  };
}

/** Refusals that leave bytes of the body unread close the connection: the rest is not worth reading. */
function refuse(
  ctx: Context,
  code: "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_ENCODING" | "INVALID_ENCODING",
): never {
  ctx.set("Connection", "close");
  lingerOnClose(ctx.req);
  if (code === "UNSUPPORTED_ENCODING") ctx.set("Accept-Encoding", BODY_ENCODINGS.join(", "));
  throw new CohentError(
    code,
    undefined,
    code === "UNSUPPORTED_ENCODING" ? { accepted: [...BODY_ENCODINGS, "identity"] } : undefined,
  );
}

/**
 * Reads the body as sent and, when compressed, decoded as it streams: both
 * the bytes sent and the bytes decoded stop at `limit`, so a zip bomb costs
 * the limit, not its inflated size. Resolves null when a limit was passed, and
 * rejects with the decoder's error on corrupt data.
 */
function readBody(
  req: IncomingMessage,
  encoding: BodyEncoding | "identity",
  limit: number,
): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const decoder = encoding === "identity" ? null : DECODERS[encoding]();
    const chunks: Buffer[] = [];
    let sent = 0;
    let decoded = 0;
    let settled = false;
    const settle = (err: Error | null, value: Buffer | null = null) => {
      if (settled) return;
      settled = true;
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (decoder && !decoder.destroyed) decoder.destroy();
      // Whatever is left of the body is read and dropped until the connection closes after the answer.
      if (!req.complete) req.resume();
      if (err) reject(err);
      else resolve(value);
    };
    const take = (chunk: Buffer) => {
      decoded += chunk.length;
      if (decoded > limit) return settle(null);
      chunks.push(chunk);
    };
    const onData = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > limit) return settle(null);
      if (!decoder) return take(chunk);
      if (!decoder.write(chunk)) {
        req.pause();
        decoder.once("drain", () => req.resume());
      }
    };
    const onEnd = () => (decoder ? decoder.end() : settle(null, Buffer.concat(chunks, decoded)));
    const onError = (err: Error) => settle(err);
    // A client that goes away mid-body: nobody is left to answer.
    const onClose = () => {
      if (!req.complete) settle(new CohentError("BAD_REQUEST", "The request body ended early."));
    };
    decoder?.on("data", take);
    decoder?.once("end", () => settle(null, Buffer.concat(chunks, decoded)));
    decoder?.on("error", () => settle(new CohentError("INVALID_ENCODING")));
    req.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose);
  });
}

/** Own `__proto__` keys, or a `constructor` holding `prototype`: refused as the JSON parser used to (@hapi/bourne). */
function poisoned(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== "object") continue;
    if (Object.hasOwn(v, "__proto__")) return true;
    const c = (v as { constructor?: unknown }).constructor;
    if (Object.hasOwn(v, "constructor") && c && typeof c === "object" && Object.hasOwn(c, "prototype"))
      return true;
    stack.push(...Object.values(v));
  }
  return false;
}

/** JSON text: an object or array (whitespace first is fine); empty is `{}`. */
function parseJson(text: string): unknown {
  if (!text.trim()) return {};
  if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text))
    throw new CohentError("INVALID_JSON", "The request body must be a JSON object.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CohentError("INVALID_JSON");
  }
  if (/proto|constructor|\\u/.test(text) && poisoned(value))
    throw new CohentError("INVALID_JSON", "The request body holds a forbidden prototype property.");
  return value;
}

/**
 * The JSON body of a POST, PUT or PATCH, for the routes that take one: each
 * mounts it after the checks its headers allow (credentials, media type), so
 * that a client waiting on `Expect: 100-continue` is refused before it sends
 * anything, and is sent its 100 only here, when the body is wanted.
 * Content-Encoding gzip or deflate is decoded (415 UNSUPPORTED_ENCODING
 * otherwise; 400 INVALID_ENCODING when corrupt); BOUNDS.bodyBytes bounds the
 * bytes sent and the bytes decoded alike (413 PAYLOAD_TOO_LARGE). Text is
 * UTF-8, whatever charset the content type names.
 */
export function jsonBody(limit: number = BOUNDS.bodyBytes) {
  return async (ctx: Context, next: Next) => {
    if (ctx.request.body !== undefined || !["POST", "PUT", "PATCH"].includes(ctx.method)) return next();
    // Not JSON: not read (the route answers UNSUPPORTED_MEDIA_TYPE).
    if (!ctx.is("application/json")) {
      ctx.request.body = {};
      return next();
    }
    const encoding = bodyEncoding(ctx.get("content-encoding"));
    if (!encoding) refuse(ctx, "UNSUPPORTED_ENCODING");
    if (Number(ctx.get("content-length") || 0) > limit) refuse(ctx, "PAYLOAD_TOO_LARGE");
    sendContinue(ctx.req, ctx.res);
    let raw: Buffer | null;
    try {
      raw = await readBody(ctx.req, encoding, limit);
    } catch (err) {
      if (err instanceof CohentError && err.code === "INVALID_ENCODING") refuse(ctx, "INVALID_ENCODING");
      throw err;
    }
    if (!raw) refuse(ctx, "PAYLOAD_TOO_LARGE");
    ctx.request.body = parseJson(raw.toString("utf8"));
    await next();
  };
}

/**
 * NUL characters in a JSON body: PostgreSQL text cannot hold them and no
 * field needs them, so they are refused, for every route and for every call
 * the /mcp endpoint makes, with a stable code (an iterative walk: a deeply
 * nested body cannot overflow the stack). Path lists are left to the
 * protocol's path rules, which answer INVALID_PATH.
 */
export function assertNoNul(body: unknown): void {
  const stack: unknown[] = [body];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\u0000"))
        throw new CohentError("INVALID_INPUT", "NUL characters are not accepted in any field.");
    } else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes("\u0000"))
          throw new CohentError("INVALID_INPUT", "NUL characters are not accepted in any field.");
        if (k !== "paths") stack.push(x);
      }
    }
  }
}
