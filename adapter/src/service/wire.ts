/**
 * HTTP/1.1 on the wire, for the adapter's lean transport (tcp.ts): the
 * request's bytes and the parse of a whole response. Pure, so the table
 * tests hold every case a server or a proxy may send.
 */

/** What node:http refuses in a header value (its checkInvalidHeaderChar): a CR or LF would split the request. */
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export class WireError extends Error {}

/** What the transports read of a request's URL: a URL, or the same fields of a plain one (plainUrl). */
export type Target = Pick<
  URL,
  "href" | "protocol" | "host" | "hostname" | "port" | "pathname" | "search" | "origin"
>;

/**
 * http:// to a dotted IPv4 address, localhost or [::1], and a path of plain
 * segments (none empty or starting with a dot), no query: the service URLs a
 * checkout names, in the form new URL() leaves as it is.
 */
const PLAIN_URL =
  /^http:\/\/(localhost|(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}|\[::1\])(?::([1-9]\d{0,4}))?((?:\/[\w~-][\w.~-]*)*)$/;

/**
 * A URL that needs no parsing: the fields new URL() would give it, or null
 * for any other (its caller then builds the URL). A hook makes one request,
 * and a process's first URL costs it ~1 ms: node:internal/url's functions
 * are compiled on first use (node --log-function-events; a process that
 * builds one URL against one that does not, interleaved).
 */
export function plainUrl(url: string): Target | null {
  const m = PLAIN_URL.exec(url);
  // Port 80 is the default, which URL leaves out; past 65535 URL refuses.
  if (!m || m[2] === "80" || Number(m[2] ?? 0) > 65535) return null;
  const host = m[2] ? `${m[1]}:${m[2]}` : m[1]!;
  const pathname = m[3] || "/";
  return {
    href: `http://${host}${pathname}`,
    protocol: "http:",
    host,
    hostname: m[1]!,
    port: m[2] ?? "",
    pathname,
    search: "",
    origin: `http://${host}`,
  };
}

/**
 * The request head and body as one string. The connection closes after the
 * answer, so the response ends at EOF at the latest. Throws WireError on a
 * header that node:http would refuse too.
 */
export function requestText(
  method: string,
  target: Target,
  headers: Record<string, string>,
  body: string | undefined,
): string {
  const lines = [`${method} ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`];
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new WireError(`Invalid header name ["${name}"]`);
    if (INVALID_HEADER_VALUE.test(value))
      throw new WireError(`Invalid character in header content ["${name}"]`);
    lines.push(`${name}: ${value}`);
  }
  if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  lines.push("connection: close", "", "");
  return lines.join("\r\n") + (body ?? "");
}

export interface WireResponse {
  status: number;
  body: Buffer;
}

/** Chunked transfer coding's body, or null when the chunks end early. */
function dechunk(raw: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    if (eol === -1) return null;
    const size = parseInt(raw.toString("latin1", at, eol).split(";")[0]!.trim(), 16);
    if (!Number.isFinite(size) || size < 0) throw new WireError("bad chunk size");
    if (size === 0) return Buffer.concat(parts);
    const start = eol + 2;
    if (raw.length < start + size + 2) return null;
    parts.push(raw.subarray(start, start + size));
    at = start + size + 2;
  }
}

/** The status line and the header fields, once the head is whole; null before. */
function head(
  raw: Buffer,
): { status: number; header(name: string): string | undefined; body: number } | null {
  const end = raw.indexOf("\r\n\r\n");
  if (end === -1) return null;
  const [statusLine, ...fields] = raw.toString("latin1", 0, end).split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine!);
  if (!m) throw new WireError("not an HTTP/1.x response");
  const header = (name: string) => {
    const f = fields.find((f) => f.slice(0, f.indexOf(":")).trim().toLowerCase() === name);
    return f?.slice(f.indexOf(":") + 1).trim();
  };
  return { status: Number(m[1]), header, body: end + 4 };
}

/**
 * How many bytes the whole response takes, once its head is in: a number
 * (the head and a declared length), "chunked" (whole at its last chunk), or
 * "eof" (whole when the server closes). null while the head is incomplete.
 * The connection is asked to close, but a response known to be whole is
 * taken without waiting for that.
 */
export function expectedLength(raw: Buffer): number | "chunked" | "eof" | null {
  const h = head(raw);
  if (!h) return null;
  if (/\bchunked\b/i.test(h.header("transfer-encoding") ?? "")) return "chunked";
  const declared = h.header("content-length");
  return declared !== undefined && /^\d+$/.test(declared) ? h.body + Number(declared) : "eof";
}

/** Whether a chunked body has reached its last chunk (no trailers: with them, the close ends it). */
export const lastChunkIn = (raw: Buffer) =>
  raw.length >= 5 && raw.subarray(raw.length - 5).toString("latin1") === "0\r\n\r\n";

/**
 * A response received whole (its declared length, its last chunk) or until
 * the server closed the connection. Throws WireError when it is not HTTP/1.x
 * or ends before its declared length (node:http's "socket hang up").
 */
export function parseResponse(raw: Buffer): WireResponse {
  const h = head(raw);
  if (!h) throw new WireError("socket hang up");
  const rest = raw.subarray(h.body);
  if (/\bchunked\b/i.test(h.header("transfer-encoding") ?? "")) {
    const body = dechunk(rest);
    if (!body) throw new WireError("socket hang up");
    return { status: h.status, body };
  }
  const declared = h.header("content-length");
  if (declared === undefined) return { status: h.status, body: rest };
  const length = Number(declared);
  if (!/^\d+$/.test(declared) || rest.length < length) throw new WireError("socket hang up");
  return { status: h.status, body: rest.subarray(0, length) };
}
