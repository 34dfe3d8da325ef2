import type { HookPayload } from "../guard/tools.js";
import {
  fileInput,
  mcpTool,
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
 * Gemini CLI (measured on 0.58.0 and 0.61.0): Claude's snake_case keys with
 * its own event and tool names. A deny is `{"decision":"deny","reason"}` at
 * exit 0 (Claude's shape is ignored: the tool runs); the model reads
 * "Tool execution blocked: <reason>". A sub-agent's calls carry the
 * parent's session and nothing that marks them, so they are the parent's
 * calls to the guard (invoke_agent runs in the foreground).
 * run_shell_command runs in its `dir_path` (0.58.0 and 0.61.0; `directory`
 * in older releases), resolved against the project's directory, which is
 * the payload's cwd: the guard reads the command's paths from there.
 */

const EVENTS: Record<string, HookEvent> = {
  SessionStart: "SessionStart",
  BeforeAgent: "UserPromptSubmit",
  BeforeTool: "PreToolUse",
  AfterTool: "PostToolUse",
  AfterAgent: "Stop",
  SessionEnd: "SessionEnd",
};
const NATIVE_NAME: Record<HookEvent, string> = {
  SessionStart: "SessionStart",
  UserPromptSubmit: "BeforeAgent",
  PreToolUse: "BeforeTool",
  PostToolUse: "AfterTool",
  Stop: "AfterAgent",
  SubagentStop: "AfterAgent",
  SessionEnd: "SessionEnd",
};

/** Gemini's tools that write nothing of the checkout (measured list, and the reads its docs name). */
const READS: ReadonlySet<string> = new Set([
  "read_file",
  "read_many_files",
  "list_directory",
  "grep_search",
  "search_file_content",
  "glob",
  "web_fetch",
  "google_web_search",
  "write_todos",
  "save_memory",
  "list_background_processes",
  "read_background_output",
  "enter_plan_mode",
  "exit_plan_mode",
  "update_topic",
  "activate_skill",
  "invoke_agent",
]);

function tool(name: string, input: Record<string, unknown>, raw: Record<string, unknown>): Mapped | null {
  switch (name) {
    case "write_file":
      return { name: "Write", input: fileInput(input, ["file_path", "absolute_path", "path"]) };
    case "replace":
      return { name: "Edit", input: fileInput(input, ["file_path", "absolute_path", "path"]) };
    case "run_shell_command":
      return { name: "Bash", input: { command: input.command }, dir: input.dir_path ?? input.directory };
    // Reads keep their paths (the stale-write check records them): `file_path` (0.58.0, 0.61.0), `absolute_path` before.
    case "read_file":
      return readOf(input, ["file_path", "absolute_path", "path"]);
    case "read_many_files": {
      const paths = Array.isArray(input.paths) ? input.paths.filter((p) => typeof p === "string") : [];
      return { name: "Read", input: { paths } };
    }
  }
  if (READS.has(name)) return READ;
  // MCP tools: `mcp_<server>_<tool>`, with the server named in mcp_context (the name alone is ambiguous).
  const ctx = obj(raw.mcp_context);
  const server = str(ctx.server_name);
  const mcpName = str(ctx.tool_name);
  if (server && mcpName) return mcpTool(server, mcpName, input);
  if (name.startsWith("mcp__")) return { name, input }; // the documented spelling (measured: one underscore)
  const m = /^mcp_([^_]+)_(.+)$/.exec(name);
  if (m) return mcpTool(m[1]!, m[2]!, input);
  return null;
}

export const GEMINI: Dialect = {
  host: "gemini",
  label: "Gemini CLI",
  read(raw) {
    const event = EVENTS[str(raw.hook_event_name) ?? ""];
    if (!event) return null; // BeforeModel, PreCompress, …: nothing for the guard
    const p: HookPayload = {
      hook_event_name: event,
      session_id: str(raw.session_id),
      cwd: str(raw.cwd),
      ...(typeof raw.prompt === "string" ? { prompt: raw.prompt } : {}),
    };
    const name = str(raw.tool_name);
    if (!name || (event !== "PreToolUse" && event !== "PostToolUse")) return { p };
    const mapped = tool(name, obj(raw.tool_input), raw);
    if (!mapped) return { p: { ...p, tool_name: name, tool_input: {} }, unknownTool: name };
    return { p: { ...p, cwd: runsIn(p.cwd, mapped.dir), tool_name: mapped.name, tool_input: mapped.input } };
  },
  deny: (reason) => ({ stdout: JSON.stringify({ decision: "deny", reason }), exitCode: 0 }),
  allow: () => undefined,
  // BeforeAgent's and AfterTool's additionalContext reach the model (Gemini's hook reference).
  context: (event, text) =>
    event === "UserPromptSubmit" || event === "PostToolUse"
      ? JSON.stringify({ hookSpecificOutput: { hookEventName: NATIVE_NAME[event], additionalContext: text } })
      : undefined,
  version: () => null,
};
