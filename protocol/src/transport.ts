// The HTTP transport's rules for request bodies and methods, zod-free: the backend enforces them,
// docs/protocol.md states them from here.

/**
 * Content codings a request body may carry, besides none (`identity`). gzip
 * and deflate decode with a 32 KiB window, so what a body costs follows the
 * bytes decoded, which the body limit bounds. `br` is not among them: its
 * decoder takes the window the sender names (up to 16 MiB, filled before the
 * first decoded byte), so a body of a few hundred bytes would cost 16 MiB and
 * tens of milliseconds, and a slow sender could hold that per connection.
 */
export const BODY_ENCODINGS = ["gzip", "deflate"] as const;
export type BodyEncoding = (typeof BODY_ENCODINGS)[number];

/** Every method the server answers somewhere (a CONNECT or `OPTIONS *` is told these). */
export const SERVER_METHODS = ["GET", "HEAD", "POST", "OPTIONS"] as const;

/**
 * The decoder a Content-Encoding header asks for: `identity` for none, null
 * when it is not accepted. One coding, case-insensitive, `x-gzip` as `gzip`
 * (RFC 9110 8.4.1.3); `identity` entries in a list are no-ops. A stack of two
 * codings is refused, not decoded: no client sends one, and each layer would
 * multiply the decoding work a request can ask for.
 */
export function bodyEncoding(header: string | undefined): BodyEncoding | "identity" | null {
  const codings = (header ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return "identity";
  if (codings.length > 1) return null;
  const coding = codings[0] === "x-gzip" ? "gzip" : codings[0]!;
  return (BODY_ENCODINGS as readonly string[]).includes(coding) ? (coding as BodyEncoding) : null;
}
