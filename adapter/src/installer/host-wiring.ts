import { CohentError as ClientError } from "@cohent/protocol/codes";
import { FAIL_CLOSED_REASON } from "../guard/guard.js";
import {
  COPILOT_HOOKS_FILE,
  COPILOT_SETTINGS_FILES,
  CURSOR_HOOKS_FILE,
  GEMINI_SETTINGS_FILE,
} from "../guard/guard-files.js";
import { isCohentHook } from "./trust.js";

/**
 * The native wiring of the clients beyond Codex and Claude Code, as `init`
 * writes it and `doctor` and the wiring fingerprint read it back. Each
 * command names its host (`--host`), so the hook never has to guess the
 * dialect of a call that came through the wiring written for that client.
 * What each client does when a hook fails is measured
 * (test/clients/MORE-CLIENTS-MEASURED.md); the comments say which failure
 * each entry closes and how.
 */

/** The client's hook timeout in seconds; the adapter's own deadline (25 s, deadline.ts) stays below it. */
export const HOOK_TIMEOUT = 30;

/** The hook command of one host: the adapter, not the cohent.mjs entry (Node's ES module loader costs ~8 ms). */
export const hookCommand = (host: string) => `node .cohent/cohent.cjs hook --host ${host}`;

/**
 * Turns every non-zero exit of the adapter (missing file, crash, `node` not
 * on PATH) into exit 2 with one line on stderr, which Codex, Claude Code and
 * Gemini CLI read as a refusal. The adapter's own stderr (a stack trace with
 * local paths) goes nowhere: the model reads that line only. `sh -c` keeps
 * the `|| { …; }` form independent of the user's shell.
 */
export const failClosedCommand = (inner: string) =>
  `sh -c '${inner} 2>/dev/null || { echo "${FAIL_CLOSED_REASON}" >&2; exit 2; }'`;

/** A hook handler in one of the flat formats (Copilot, Cursor): a list of handlers per event. */
export { COPILOT_HOOKS_FILE, COPILOT_SETTINGS_FILES, CURSOR_HOOKS_FILE, GEMINI_SETTINGS_FILE };

export type FlatHandler = Record<string, unknown>;

/**
 * Copilot CLI: `.github/hooks/cohent.json`, command hooks only (HTTP hooks
 * fail open). Every non-zero exit and a missing program refuse the call
 * (measured, 1.0.85 and 1.0.102), so no wrapper: exit 2 would only swap
 * "hook errored" for "hook exited with code 2". A hang past `timeoutSec`
 * runs the tool: the adapter answers a deny at 25 s, before the 30 s.
 * `cwd: "."` is the repository root: 1.0.85 otherwise runs the hook in the
 * folder the agent was started in, where .cohent/ is not (measured).
 */
export const COPILOT_EVENTS = [
  "sessionStart",
  "userPromptSubmitted",
  "preToolUse",
  "postToolUse",
  "agentStop",
  "subagentStart",
  "subagentStop",
  "sessionEnd",
] as const;
export const COPILOT_HOOK_COMMAND = hookCommand("copilot");
export const copilotHandler = (_event: string): FlatHandler => ({
  type: "command",
  bash: COPILOT_HOOK_COMMAND,
  cwd: ".",
  timeoutSec: HOOK_TIMEOUT,
});

/**
 * Gemini CLI: `.gemini/settings.json`. BeforeTool behind the fail-closed
 * wrapper: bare, an exit 1 (what a crash of Node gives) only warns and the
 * tool runs; wrapped, every exit-code failure refuses (measured, 0.58.0 and
 * 0.61.0). A hang past `timeout` (milliseconds) and non-JSON at exit 0 stay
 * open: the adapter's deadline answers first. The other events run bare:
 * exit 2 there blocks the prompt (BeforeAgent) or keeps the agent going
 * (AfterAgent).
 */
export const GEMINI_HOOKS: { event: string; matcher?: string }[] = [
  { event: "SessionStart" },
  { event: "BeforeAgent" },
  { event: "BeforeTool", matcher: "*" },
  { event: "AfterTool", matcher: "*" },
  { event: "AfterAgent" },
  { event: "SessionEnd" },
];
export const GEMINI_HOOK_COMMAND = hookCommand("gemini");
export const GEMINI_GUARD_COMMAND = failClosedCommand(GEMINI_HOOK_COMMAND);
export const GEMINI_TIMEOUT_MS = HOOK_TIMEOUT * 1000;
export const geminiHandler = (event: string) => ({
  type: "command",
  command: event === "BeforeTool" ? GEMINI_GUARD_COMMAND : GEMINI_HOOK_COMMAND,
  timeout: GEMINI_TIMEOUT_MS,
});

/**
 * Gemini CLI reads GEMINI.md, not AGENTS.md, unless `context.fileName` names
 * it (its settings reference): init adds AGENTS.md, where the protocol's
 * section is, and keeps GEMINI.md and any name already there.
 */
export function geminiContext(config: Record<string, any>): Record<string, any> {
  const context = config.context && typeof config.context === "object" ? config.context : {};
  const had = context.fileName;
  const names: string[] =
    typeof had === "string"
      ? [had]
      : Array.isArray(had)
        ? had.filter((n) => typeof n === "string")
        : ["GEMINI.md"];
  return {
    ...config,
    context: { ...context, fileName: names.includes("AGENTS.md") ? names : [...names, "AGENTS.md"] },
  };
}

/**
 * Cursor: `.cursor/hooks.json` as documented (not installable here, so not
 * measured): `failClosed` on preToolUse makes a crash, a timeout or empty
 * stdout a block, so the adapter prints an explicit allow. Hook processes
 * run in the workspace root. `timeout` is in seconds.
 */
export const CURSOR_EVENTS = [
  "sessionStart",
  "beforeSubmitPrompt",
  "preToolUse",
  "postToolUse",
  "stop",
  "subagentStart",
  "subagentStop",
  "sessionEnd",
] as const;
export const CURSOR_HOOK_COMMAND = hookCommand("cursor");
export const cursorHandler = (event: string): FlatHandler =>
  event === "preToolUse"
    ? { command: CURSOR_HOOK_COMMAND, timeout: HOOK_TIMEOUT, failClosed: true }
    : { command: CURSOR_HOOK_COMMAND, timeout: HOOK_TIMEOUT };

/**
 * Puts our handler into each event's list of a flat hooks file (`{"version":
 * 1, "hooks": {event: [handler…]}}`): in place where it already is (found by
 * the field that holds its command), appended otherwise; other handlers and
 * settings stay. A `version` other than 1 is a format init does not know: it
 * refuses rather than rewrite it.
 */
export function mergeFlatHooks(
  config: Record<string, any>,
  file: string,
  events: readonly string[],
  handler: (event: string) => FlatHandler,
  key: "bash" | "command",
  changed: string[] = [],
): Record<string, any> {
  if (config.version !== undefined && config.version !== 1)
    throw new ClientError(
      "INVALID_INPUT",
      `${file} has version ${JSON.stringify(config.version)}, not 1; fix it by hand, then rerun init (it never overwrites a file it cannot merge).`,
    );
  const out: Record<string, any> = { version: 1, ...structuredClone(config) };
  const hooks = (
    out.hooks && typeof out.hooks === "object" && !Array.isArray(out.hooks) ? out.hooks : (out.hooks = {})
  ) as Record<string, FlatHandler[]>;
  for (const event of events) {
    const list = Array.isArray(hooks[event]) ? hooks[event]! : (hooks[event] = []);
    const i = list.findIndex((h) => isCohentHook(h?.[key]));
    const next = handler(event);
    if (i === -1) {
      list.push(next);
      changed.push(event);
    } else {
      if (JSON.stringify(list[i]) !== JSON.stringify(next)) changed.push(event);
      list[i] = next;
    }
  }
  return out;
}
