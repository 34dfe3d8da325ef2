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

/** [A-Za-z0-9_~-]: a character of a plain path segment (a dot too, but not first). */
function segmentChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 126 || c === 45
  );
}

/** Where the run of ASCII digits from `i` ends. */
function digitsEnd(s: string, i: number): number {
  while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  return i;
}

/** A number of 1 to `max` digits with no leading zero (0 itself allowed) and at most `top`, from `i`: where it ends, or -1. */
function numberEnd(s: string, i: number, max: number, top: number): number {
  const end = digitsEnd(s, i);
  const n = end - i;
  if (n === 0 || n > max || (n > 1 && s.charCodeAt(i) === 48) || Number(s.slice(i, end)) > top) return -1;
  return end;
}

/** Where the host localhost, [::1] or a dotted IPv4 address of four plain octets, from `i`, ends; -1 for any other. */
function hostEnd(s: string, i: number): number {
  if (s.startsWith("localhost", i)) return i + 9;
  if (s.startsWith("[::1]", i)) return i + 5;
  for (let octet = 0; octet < 4; octet++) {
    if (octet > 0) {
      if (s.charCodeAt(i) !== 46) return -1;
      i++;
    }
    i = numberEnd(s, i, 3, 255);
    if (i === -1) return -1;
  }
  return i;
}

/**
 * A URL that needs no parsing: the fields new URL() would give it, or null
 * for any other (its caller then builds the URL). Plain: http:// to a dotted
 * IPv4 address, localhost or [::1], a port other than 80, and a path of
 * plain segments (none empty or starting with a dot), no query: the service
 * URLs a checkout names, in the form new URL() leaves as it is.
 *
 * A hook makes one request, and a process's first URL costs it ~1 ms:
 * node:internal/url's functions are compiled on first use (node
 * --log-function-events; a process that builds one URL against one that
 * does not, interleaved). Read by hand, not by a regular expression: the
 * first run of the expression that said the same (its alternations and
 * bounded repeats compiled by V8) cost 0.3–0.6 ms in a fresh process.
 */
export function plainUrl(url: string): Target | null {
  if (!url.startsWith("http://")) return null;
  const hostAt = 7;
  let i = hostEnd(url, hostAt);
  if (i === -1) return null;
  const hostname = url.slice(hostAt, i);
  let port = "";
  if (url.charCodeAt(i) === 58) {
    const end = numberEnd(url, i + 1, 5, 65535);
    // Port 80 is the default, which URL leaves out; 0 and past 65535 are not plain.
    if (end === -1 || url.charCodeAt(i + 1) === 48) return null;
    port = url.slice(i + 1, end);
    if (port === "80") return null;
    i = end;
  }
  const pathAt = i;
  while (i < url.length) {
    if (url.charCodeAt(i) !== 47 || !segmentChar(url.charCodeAt(i + 1))) return null;
    i += 2;
    while (i < url.length && (segmentChar(url.charCodeAt(i)) || url.charCodeAt(i) === 46)) i++;
  }
  const host = port ? `${hostname}:${port}` : hostname;
  const pathname = url.slice(pathAt) || "/";
  return {
    href: `http://${host}${pathname}`,
    protocol: "http:",
    host,
    hostname,
    port,
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
