import type { HookPayload } from "../guard/tools.js";
import {
  claudeDeny,
  fileInput,
  mcpTool,
  obj,
  READ,
  readOf,
  str,
  type Dialect,
  type HookEvent,
  type Mapped,
  type Reading,
} from "./dialect.js";

/**
 * Copilot CLI (measured on 1.0.85 and 1.0.102). Its own wiring
 * (.github/hooks/cohent.json) sends camelCase payloads (`sessionId`,
 * `toolName`, `toolArgs`) and honours only the flat deny
 * `{permissionDecision, permissionDecisionReason}`: Claude's nested shape
 * is ignored there, so the tool runs. Through Claude's settings it sends
 * Claude's shape with its patch tool as `Edit` whose input is the raw patch
 * string, and honours Claude's deny. Its sub-agents call under their own
 * session id; 1.0.102 names the parent (`parentAgentId`), 1.0.85 does not
 * (its sub-agent is then a session of its own, held to its own intent).
 * Copilot reads no context from any hook's output.
 */

const NATIVE_EVENTS: Record<string, HookEvent> = {
  sessionStart: "SessionStart",
  userPromptSubmitted: "UserPromptSubmit",
  preToolUse: "PreToolUse",
  postToolUse: "PostToolUse",
  agentStop: "Stop",
  subagentStop: "SubagentStop",
  sessionEnd: "SessionEnd",
};
const CLAUDE_EVENTS: ReadonlySet<string> = new Set(Object.values(NATIVE_EVENTS));

/** Copilot's tools that write nothing of the checkout (reads, its session store, its own agents and docs). */
const READS: ReadonlySet<string> = new Set([
  "view",
  "rg",
  "grep",
  "glob",
  "read_bash",
  "list_bash",
  "skill",
  "sql",
  "session_store_sql",
  "read_agent",
  "list_agents",
  "write_agent",
  "fetch_copilot_cli_documentation",
  "report_intent",
  "web_fetch",
  "web_search",
]);

/** A patch tool's body, as a string (the custom tool's free text) or under the keys a JSON tool would use. */
function patchInput(args: unknown): Mapped {
  const body =
    typeof args === "string" ? args : [obj(args).input, obj(args).patch].find((v) => typeof v === "string");
  return { name: "apply_patch", input: typeof body === "string" ? { input: body } : {} };
}

/** One of Copilot's own tool names in the guard's terms; null when no table knows it. */
function nativeTool(name: string, args: unknown): Mapped | null {
  const input = obj(args);
  if (name === "apply_patch") return patchInput(args);
  if (name === "create") return { name: "Write", input: fileInput(input, ["path", "file_path"]) };
  if (name === "edit" || name === "str_replace")
    return typeof args === "string"
      ? patchInput(args)
      : { name: "Edit", input: fileInput(input, ["path", "file_path"]) };
  // bash names no directory (command, description, shellId, mode, detach, initial_wait on 1.0.85 and 1.0.102).
  if (name === "bash") return { name: "Bash", input: { command: input.command } };
  if (name === "write_bash") return { name: "write_stdin", input: {} };
  if (name === "stop_bash") return { name: "KillShell", input: {} };
  if (name === "task") return { name: "Agent", input };
  if (name === "view") return readOf(input, ["path", "file_path"]);
  if (READS.has(name)) return READ;
  // MCP tools are `<server>-<tool>`, nothing else marks them (measured); the server name may hold a dash itself.
  const dash = name.indexOf("-");
  if (dash > 0 && dash < name.length - 1) return mcpTool(name.slice(0, dash), name.slice(dash + 1), input);
  return null;
}

/** The names Copilot gives its tools in Claude's shape (measured: Edit, Bash, Read, Agent), then its own. */
function claudeShapedTool(name: string, args: unknown): Mapped | null {
  const input = obj(args);
  switch (name) {
    case "Edit":
    case "MultiEdit":
      return typeof args === "string"
        ? patchInput(args)
        : { name, input: fileInput(input, ["file_path", "path"]) };
    case "Write":
      return typeof args === "string"
        ? patchInput(args)
        : { name, input: fileInput(input, ["file_path", "path"]) };
    case "Bash":
      return { name, input: { command: input.command } };
    case "Agent":
    case "Task":
      return { name: "Agent", input };
    case "Read":
      return readOf(input, ["file_path", "path"]);
    case "Glob":
    case "Grep":
      return READ;
  }
  if (name.startsWith("mcp__")) return { name, input };
  return nativeTool(name, args);
}

function reading(
  event: HookEvent,
  raw: Record<string, unknown>,
  ids: { session?: string; agent?: string; parent?: string },
  tool: { name: string; args: unknown; map: (n: string, a: unknown) => Mapped | null } | null,
): Reading | null {
  // A sub-agent's prompt is its parent's task, not a person's; its end is the parent's SubagentStop.
  if (
    ids.parent &&
    (event === "UserPromptSubmit" || event === "Stop" || event === "SessionStart" || event === "SessionEnd")
  )
    return null;
  const p: HookPayload = {
    hook_event_name: event,
    session_id: ids.parent ?? ids.session,
    cwd: str(raw.cwd),
    ...(ids.parent && ids.agent ? { agent_id: ids.agent } : {}),
    ...(typeof raw.prompt === "string" ? { prompt: raw.prompt } : {}),
  };
  if (event === "SubagentStop") {
    p.session_id = ids.session;
    if (ids.agent) p.agent_id = ids.agent;
    else delete p.agent_id;
  }
  if (!tool || (event !== "PreToolUse" && event !== "PostToolUse")) return { p };
  const mapped = tool.map(tool.name, tool.args);
  if (!mapped) return { p: { ...p, tool_name: tool.name, tool_input: {} }, unknownTool: tool.name };
  return { p: { ...p, tool_name: mapped.name, tool_input: mapped.input } };
}

/** A camelCase payload of Copilot's own wiring. */
function readNative(raw: Record<string, unknown>): Reading | null {
  if (raw.hookName !== undefined) return null; // permissionRequest: Copilot's own permission step, not the guard's
  const event = nativeEventOf(raw);
  if (!event) return null;
  const parent = str(raw.parentAgentId);
  const name = str(raw.toolName);
  return reading(
    event,
    raw,
    { session: str(raw.sessionId), agent: str(raw.agentId), parent },
    name ? { name, args: raw.toolArgs, map: nativeTool } : null,
  );
}

/**
 * Copilot's own payloads name no event (measured: only permissionRequest
 * has `hookName`); each event's keys tell it (the fixtures of both versions
 * are the table's test).
 */
function nativeEventOf(raw: Record<string, unknown>): HookEvent | null {
  if ("toolResult" in raw && "toolName" in raw) return "PostToolUse";
  if ("toolName" in raw && "toolArgs" in raw && !("hookName" in raw)) return "PreToolUse";
  if ("response" in raw && "agentId" in raw) return "SubagentStop";
  if ("agentName" in raw) return null; // subagentStart
  if ("stopReason" in raw) return "Stop";
  if ("source" in raw) return "SessionStart";
  if ("reason" in raw) return "SessionEnd";
  if ("prompt" in raw) return "UserPromptSubmit";
  return null;
}

/** Claude's shape, as Copilot sends it through `.claude/settings.json` (or its own PascalCase hooks). */
function readClaudeShaped(raw: Record<string, unknown>): Reading | null {
  const name = str(raw.hook_event_name);
  if (!name || !CLAUDE_EVENTS.has(name)) return null; // PermissionRequest and SubagentStart come without one
  const tool = str(raw.tool_name);
  return reading(
    name as HookEvent,
    raw,
    { session: str(raw.session_id), agent: str(raw.agent_id), parent: str(raw.parent_agent_id) },
    tool ? { name: tool, args: raw.tool_input, map: claudeShapedTool } : null,
  );
}

const version = (env: Readonly<Record<string, string | undefined>>) => env.COPILOT_CLI_BINARY_VERSION ?? null;

/** Copilot's own wiring: camelCase in, the flat deny out (its nested Claude form is ignored there: measured open). */
export const COPILOT: Dialect = {
  host: "copilot",
  label: "Copilot CLI",
  read: readNative,
  deny: (reason) => ({
    stdout: JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: reason }),
    exitCode: 0,
  }),
  allow: () => undefined,
  context: () => undefined,
  version,
};

/** Copilot running the Claude Code entry of `.claude/settings.json`: Claude's shape and Claude's deny (measured honoured). */
export const COPILOT_VIA_CLAUDE: Dialect = {
  host: "copilot",
  label: "Copilot CLI (through .claude/settings.json)",
  read: (raw) => (typeof raw.hook_event_name === "string" ? readClaudeShaped(raw) : null),
  deny: (reason) => ({ stdout: JSON.stringify(claudeDeny(reason)), exitCode: 0 }),
  allow: () => undefined,
  context: () => undefined,
  version,
};

/**
 * Copilot's own hooks file with Claude's PascalCase event names (documented:
 * then it sends Claude's shape). Which deny it honours there is not
 * measured: both forms, the flat and the nested, in one object.
 */
export const COPILOT_PASCAL: Dialect = {
  ...COPILOT_VIA_CLAUDE,
  label: "Copilot CLI",
  deny: (reason) => ({
    stdout: JSON.stringify({
      permissionDecision: "deny",
      permissionDecisionReason: reason,
      ...claudeDeny(reason),
    }),
    exitCode: 0,
  }),
};
