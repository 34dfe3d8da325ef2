import type { REMOTE_WIRING, ReportedHost, Wiring } from "./hosts.js";

/**
 * Whether a session's tool calls are checked by the guard ("guarded") or only
 * asked to follow the protocol ("advisory"), and why (backend core/enforcement):
 * - guarded `fail-closed`: the host's own wiring, as init wrote it, and a tool call of it reached the guard;
 * - guarded `foreign-measured`: another client's configuration that this host was measured to honour and
 *   fail closed on (Claude Code's settings read by Copilot CLI), and a tool call reached the guard;
 * - advisory `not-reported`: no hook said which client it runs in (a custom integration over HTTP or MCP, or
 *   an older adapter); `unknown-host`: the hook could not tell; `wiring-modified`: the checkout's guard wiring
 *   differs from what init wrote; `foreign-unproven`: another client's configuration, not measured to fail
 *   closed in this host; `host-version`: a version of the host reported to ignore a deny or fail open (Copilot
 *   CLI 1.0.65 to 1.0.73); `no-guard-call`: its hook reported, but no edit or shell call has reached the guard yet;
 *   `remote-mcp`: a remote agent over the backend's /mcp endpoint, coordinated, but nothing checks its writes.
 */
export type EnforcementLevel = "guarded" | "advisory";
export type EnforcementWhy =
  | "fail-closed"
  | "foreign-measured"
  | "not-reported"
  | "unknown-host"
  | "wiring-modified"
  | "foreign-unproven"
  | "host-version"
  | "no-guard-call"
  | "remote-mcp"
  | "mcp-tool";
export interface EnforcementView {
  level: EnforcementLevel;
  why: EnforcementWhy;
  /** One sentence for people. */
  reason: string;
  /** The host its hook reported; null when none did. */
  host: ReportedHost | null;
  /** "Claude Code", …, or "unknown client". */
  hostName: string;
  hostVersion: string | null;
  /** "remote": a session of the /mcp endpoint, which no hook guards. */
  wiring: Wiring | typeof REMOTE_WIRING | null;
  /** The first guarded tool call (a kill-switch read or poll of its hook) the service saw; null before. */
  guardSeenAt: string | null;
}
