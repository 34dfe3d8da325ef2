import { HOST_IDS, isHost, type Host } from "@cohent/protocol/host-names";
import { CLAUDE, CODEX } from "./claude.js";
import { COPILOT, COPILOT_PASCAL, COPILOT_VIA_CLAUDE } from "./copilot.js";
import { CURSOR, CURSOR_VIA_CLAUDE } from "./cursor.js";
import { clientOf } from "../guard/tools.js";
import type { Detected, Dialect, Env } from "./dialect.js";
import { GEMINI } from "./gemini.js";
import { OPENCODE } from "./opencode.js";

/**
 * Which host calls the hook. The wiring init writes names it (`--host`);
 * a payload that reached Claude Code's entry from another client (Copilot
 * CLI, VS Code or Cursor read `.claude/settings.json` too) is recognised
 * from its shape and its environment, and read and answered in that
 * client's dialect: "foreign" wiring. A hook run without `--host` is an
 * older init's wiring: Codex's and Claude Code's entries were fail-closed
 * then too; any other client's is not one init wrote ("modified").
 */

export const DIALECTS: Record<Host, Dialect> = {
  codex: CODEX,
  claude: CLAUDE,
  copilot: COPILOT,
  gemini: GEMINI,
  cursor: CURSOR,
  opencode: OPENCODE,
};

/** `--host <name>` in the hook's arguments: the name, "" when the flag has no value, null when absent. */
export function hostFlag(argv: readonly string[]): string | null {
  const i = argv.indexOf("--host");
  if (i !== -1) return argv[i + 1] ?? "";
  const eq = argv.find((a) => a.startsWith("--host="));
  return eq === undefined ? null : eq.slice("--host=".length);
}

/** The refusal of a hook started with a host Cohent does not know: it cannot tell which answer that client reads. */
export const unknownHostReason = (flag: string) =>
  `Cohent: this hook was started with --host ${JSON.stringify(flag).slice(0, 40)}, which is not a client Cohent knows (${HOST_IDS.join(", ")}), so it refuses the call rather than answer in a dialect the client may not read. A person repairs the wiring with cohent init.`;

const isCursorShaped = (raw: Record<string, unknown>) =>
  "conversation_id" in raw || "cursor_version" in raw || Array.isArray(raw.workspace_roots);
const isCopilotShaped = (raw: Record<string, unknown>, env: Env) =>
  env.COPILOT_CLI === "1" || (typeof raw.sessionId === "string" && !("session_id" in raw));

/**
 * Whether the checkout has Copilot's own wiring (hook.ts looks for init's file): asked only of a
 * Copilot call through Claude's entry, and never by the loader's fast path, whose import stays small.
 */
export type CopilotWired = () => boolean;
const NOT_ASKED: CopilotWired = () => false;

/** Claude Code's entry, and what else may be running it. */
function claudeEntry(
  flagged: Dialect,
  raw: Record<string, unknown>,
  env: Env,
  copilotWired: CopilotWired,
): Detected {
  if (isCursorShaped(raw)) return { dialect: CURSOR_VIA_CLAUDE, wiring: "foreign", guardOnly: false };
  // Copilot runs its own wiring and Claude's for every call (measured): with both, this one only guards.
  if (isCopilotShaped(raw, env))
    return { dialect: COPILOT_VIA_CLAUDE, wiring: "foreign", guardOnly: copilotWired() };
  return { dialect: flagged, wiring: "fail-closed", guardOnly: false };
}

/** The dialect of one call; null for a flag naming no host (the hook refuses then, unknownHostReason). */
export function detect(
  flag: string | null,
  raw: Record<string, unknown>,
  env: Env,
  copilotWired: CopilotWired = NOT_ASKED,
): Detected | null {
  if (flag !== null) {
    if (!isHost(flag)) return null;
    if (flag === "claude" || flag === "codex") return claudeEntry(DIALECTS[flag], raw, env, copilotWired);
    if (flag === "copilot" && typeof raw.hook_event_name === "string")
      return { dialect: COPILOT_PASCAL, wiring: "fail-closed", guardOnly: false };
    return { dialect: DIALECTS[flag], wiring: "fail-closed", guardOnly: false };
  }
  // No flag: a wiring older than this adapter, read by shape.
  if (isCursorShaped(raw)) return { dialect: CURSOR, wiring: "modified", guardOnly: false };
  if (typeof raw.sessionId === "string" && !("hook_event_name" in raw))
    return { dialect: COPILOT, wiring: "modified", guardOnly: false };
  if ("input" in raw && "output" in raw && typeof raw.event === "string")
    return { dialect: OPENCODE, wiring: "modified", guardOnly: false };
  if (env.GEMINI_SESSION_ID) return { dialect: GEMINI, wiring: "modified", guardOnly: false };
  return claudeEntry(
    clientOf(raw, env as NodeJS.ProcessEnv) === "Codex" ? CODEX : CLAUDE,
    raw,
    env,
    copilotWired,
  );
}
