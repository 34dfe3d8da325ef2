import type { HookPayload } from "../guard/tools.js";
import {
  claudeDeny,
  fileInput,
  obj,
  READ,
  readOf,
  runsIn,
  str,
  type Dialect,
  type HookEvent,
  type Mapped,
} from "./dialect.js";

/**
 * Cursor (documented, not measured: it cannot be installed here;
 * test/adapter/fixtures/payloads/cursor@documented/README.md). Its payloads
 * carry `conversation_id`, `generation_id` and `workspace_roots`; a deny is
 * `{"permission":"deny","user_message","agent_message"}`, and under the
 * `failClosed` init sets an empty answer blocks, so an allow is printed.
 * `tool_name` is reported missing at times on Write and StrReplace: the
 * input's shape names the tool then, or the call is refused. A shell
 * command names the directory it runs in: `cwd` in the Shell tool's input
 * and at the top of beforeShellExecution.
 */

const EVENTS: Record<string, HookEvent> = {
  sessionStart: "SessionStart",
  beforeSubmitPrompt: "UserPromptSubmit",
  preToolUse: "PreToolUse",
  postToolUse: "PostToolUse",
  stop: "Stop",
  sessionEnd: "SessionEnd",
  // Not wired by init, but gates of their own if a person wires them.
  beforeShellExecution: "PreToolUse",
  beforeMCPExecution: "PreToolUse",
  beforeReadFile: "PreToolUse",
  afterFileEdit: "PostToolUse",
  // Claude's names, as Cursor may send them running `.claude/settings.json`.
  SessionStart: "SessionStart",
  UserPromptSubmit: "UserPromptSubmit",
  PreToolUse: "PreToolUse",
  PostToolUse: "PostToolUse",
  Stop: "Stop",
  SessionEnd: "SessionEnd",
};

const FILE_KEYS = ["file_path", "path", "target_file"] as const;
const READS: ReadonlySet<string> = new Set([
  "Read",
  "Grep",
  "Glob",
  "LS",
  "Task",
  "WebSearch",
  "WebFetch",
  "TodoWrite",
]);

function tool(name: string | undefined, input: Record<string, unknown>, event: string): Mapped | null {
  if (event === "beforeShellExecution")
    return { name: "Bash", input: { command: input.command }, dir: input.cwd };
  if (event === "afterFileEdit") return { name: "Write", input: fileInput(input, FILE_KEYS) };
  if (event === "beforeReadFile") return readOf(input, FILE_KEYS);
  if (name === undefined) {
    // The reported quirk: no tool_name. An edit's or a write's input says which; anything else is refused.
    if (typeof input.old_string === "string" || typeof input.new_string === "string")
      return { name: "Edit", input: fileInput(input, FILE_KEYS) };
    if (typeof input.content === "string" || typeof input.contents === "string")
      return { name: "Write", input: fileInput(input, FILE_KEYS) };
    if (typeof input.command === "string")
      return { name: "Bash", input: { command: input.command }, dir: input.cwd };
    return null;
  }
  switch (name) {
    case "Write":
    case "Delete":
      return { name: "Write", input: fileInput(input, FILE_KEYS) };
    case "StrReplace":
    case "Edit":
    case "MultiEdit":
      return { name: "Edit", input: fileInput(input, FILE_KEYS) };
    case "Shell":
    case "Bash":
      return { name: "Bash", input: { command: input.command }, dir: input.cwd };
    case "Read":
      return readOf(input, FILE_KEYS);
  }
  if (READS.has(name)) return READ;
  // `MCP:<tool>` names no server: opaque, held to the kill switch (a server named `cohent` cannot be told apart).
  if (name.startsWith("MCP:") && name.length > 4) return { name: `mcp__cursor__${name.slice(4)}`, input };
  if (name.startsWith("mcp__")) return { name, input };
  return null;
}

function read(raw: Record<string, unknown>) {
  const native = str(raw.hook_event_name) ?? "";
  const event = EVENTS[native];
  if (!event) return null; // subagentStart/subagentStop carry nothing the tracking could use
  const roots = Array.isArray(raw.workspace_roots) ? raw.workspace_roots : [];
  const p: HookPayload = {
    hook_event_name: event,
    session_id: str(raw.conversation_id) ?? str(raw.session_id),
    cwd: str(roots[0]) ?? str(raw.cwd),
    ...(typeof raw.model === "string" ? { model: raw.model } : {}),
    ...(typeof raw.prompt === "string" ? { prompt: raw.prompt } : {}),
  };
  const version = str(raw.cursor_version) ?? null;
  if (event !== "PreToolUse" && event !== "PostToolUse") return { p, version };
  // afterFileEdit and beforeReadFile name their file at the top level, beforeShellExecution its command.
  const flat = native === "afterFileEdit" || native === "beforeReadFile" || native === "beforeShellExecution";
  let input = flat ? raw : raw.tool_input;
  if (typeof input === "string") {
    try {
      input = JSON.parse(input); // beforeMCPExecution sends it as a JSON string
    } catch {
      input = {};
    }
  }
  const name = native === "beforeMCPExecution" ? `MCP:${str(raw.tool_name) ?? "tool"}` : str(raw.tool_name);
  const mapped = tool(name, obj(input), native);
  if (!mapped) {
    const named = name ?? "a tool call without a tool_name";
    return { p: { ...p, tool_name: named, tool_input: {} }, unknownTool: named, version };
  }
  return {
    p: { ...p, cwd: runsIn(p.cwd, mapped.dir), tool_name: mapped.name, tool_input: mapped.input },
    version,
  };
}

const cursorDeny = (reason: string) => ({ permission: "deny", user_message: reason, agent_message: reason });

export const CURSOR: Dialect = {
  host: "cursor",
  label: "Cursor",
  read,
  deny: (reason) => ({ stdout: JSON.stringify(cursorDeny(reason)), exitCode: 0 }),
  allow: () => JSON.stringify({ permission: "allow" }),
  context: () => undefined,
  version: () => null,
};

/** Cursor running the Claude Code entry: its documented answer and Claude's beside it (which one it reads there is not documented). */
export const CURSOR_VIA_CLAUDE: Dialect = {
  ...CURSOR,
  label: "Cursor (through .claude/settings.json)",
  deny: (reason) => ({
    stdout: JSON.stringify({ ...cursorDeny(reason), ...claudeDeny(reason) }),
    exitCode: 0,
  }),
};
