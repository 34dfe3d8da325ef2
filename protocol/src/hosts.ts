import { BOUNDS } from "./bounds.js";

/**
 * The clients a hook runs in, one spelling everywhere (protocol, adapter,
 * wiring, console), and what the hook tells the service about them. Zod-free:
 * the adapter builds the header with these.
 */

export * from "./host-names.js";
import { HOST_IDS, isHost, UNKNOWN_HOST, type ReportedHost } from "./host-names.js";

/**
 * How the call reached the hook: through the wiring `cohent init` wrote for
 * that host, intact ("fail-closed"); through another client's configuration
 * ("foreign", e.g. Claude Code's settings read by Copilot CLI); through a
 * wiring that differs from what init wrote ("modified"); or, intact, through
 * Claude Code's mcp_tool handler in Cohent's MCP server on a version that
 * refuses the call when the handler fails ("mcp-tool": no process per call).
 */
export const WIRINGS = ["fail-closed", "foreign", "modified", "mcp-tool"] as const;
export type Wiring = (typeof WIRINGS)[number];

/**
 * What a session of the backend's /mcp endpoint records in place of a hook's
 * wiring: no hook runs where a remote agent edits, so nothing checks its
 * writes. Never accepted from the x-cohent-host header.
 */
export const REMOTE_WIRING = "remote";

/** What the hook reports on every call it makes, as the `x-cohent-host` header. */
export interface HostReport {
  host: ReportedHost;
  /** The version the host exposes (COPILOT_CLI_BINARY_VERSION, Cursor's cursor_version, …), or null. */
  hostVersion: string | null;
  wiring: Wiring | typeof REMOTE_WIRING;
}

/**
 * `x-cohent-host: host=<host>; version=<version>; wiring=<wiring>`, sent by the
 * hook on every agent call (publish, the wiring report at a session start,
 * the kill-switch read, the poll, …): a few bytes, so that each call can carry
 * it. `version` is optional; keys the service does not know are ignored.
 */
export const HOST_HEADER = "x-cohent-host";
const VERSION = /^[A-Za-z0-9._+-]+$/;

/** The header's value for a report. A version is put in the protocol's form (other characters as `_`, cut at its bound), or dropped when empty. */
export function hostHeader(r: HostReport): string {
  const version = (r.hostVersion ?? "")
    .replace(/[^A-Za-z0-9._+-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, BOUNDS.hostVersionChars);
  // mcp-tool travels as fail-closed plus `via`: a service older than it ignores the key it does not know
  // and records the intact wiring, instead of refusing every call of a newer adapter.
  const wiring = r.wiring === "mcp-tool" ? "fail-closed; via=mcp-tool" : r.wiring;
  return `host=${r.host}; ${version ? `version=${version}; ` : ""}wiring=${wiring}`;
}

/** Parses the header; an error says what is wrong with it, for INVALID_INPUT. */
export function parseHostHeader(raw: string): { report: HostReport } | { error: string } {
  if (raw.length > 256) return { error: "at most 256 characters" };
  const fields = new Map<string, string>();
  for (const part of raw.split(";")) {
    const m = /^\s*([a-z-]{1,32})=(\S*)\s*$/.exec(part);
    if (!m) return { error: "key=value pairs separated by ;" };
    if (fields.has(m[1]!)) return { error: `${m[1]} given twice` };
    fields.set(m[1]!, m[2]!);
  }
  const host = fields.get("host");
  if (host !== UNKNOWN_HOST && !isHost(host))
    return { error: `host must be one of ${[...HOST_IDS, UNKNOWN_HOST].join(", ")}` };
  const wiring = fields.get("wiring");
  if (!(WIRINGS as readonly string[]).includes(wiring ?? ""))
    return { error: `wiring must be one of ${WIRINGS.join(", ")}` };
  const version = fields.get("version");
  if (version !== undefined && (version.length > BOUNDS.hostVersionChars || !VERSION.test(version)))
    return {
      error: `version takes letters, digits and . _ + - (at most ${BOUNDS.hostVersionChars})`,
    };
  const via = fields.get("via") === "mcp-tool" && wiring === "fail-closed" ? "mcp-tool" : null;
  return { report: { host, hostVersion: version ?? null, wiring: via ?? (wiring as Wiring) } };
}
