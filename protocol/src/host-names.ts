/**
 * The clients a hook runs in, one spelling everywhere (protocol, adapter,
 * wiring, console). Zod-free and import-free: the hook's loader reads a
 * payload's dialect with these before the adapter's bundle loads.
 */

/** Each host's name on the wire, and the name people read. */
export const HOSTS = {
  codex: "Codex",
  claude: "Claude Code",
  copilot: "Copilot CLI",
  gemini: "Gemini CLI",
  cursor: "Cursor",
  opencode: "OpenCode",
} as const;
export type Host = keyof typeof HOSTS;
export const HOST_IDS = Object.keys(HOSTS) as Host[];
/** What the hook reports when it cannot tell which client runs it. */
export const UNKNOWN_HOST = "unknown";
export type ReportedHost = Host | typeof UNKNOWN_HOST;

export const isHost = (s: unknown): s is Host => typeof s === "string" && Object.hasOwn(HOSTS, s);

/** The name people read: "Claude Code", or "unknown client". */
export const hostDisplayName = (h: string | null | undefined): string =>
  isHost(h) ? HOSTS[h] : "unknown client";
