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
 * OpenCode (measured on 1.15.13 and 1.18.33), through the plugin init
 * writes (opencode-plugin.ts): stdin `{event, input, output, directory}`,
 * stdout `{decision, reason, context?}`. The plugin runs a tool only on an
 * explicit allow and throws the reason of a deny, which is what the model
 * reads. A sub-agent (`task`) runs as a child session: session.created
 * names its parent, and the hook maps the child's calls onto the parent's
 * session from then on (hook.ts). Its bash tool runs in `workdir` when
 * the model names one (1.15.13 and 1.18.33, whose prompt asks for it
 * instead of `cd`), resolved against the session's directory.
 */

const EVENTS: Record<string, HookEvent> = {
  "session.created": "SessionStart",
  "chat.message": "UserPromptSubmit",
  "tool.execute.before": "PreToolUse",
  "tool.execute.after": "PostToolUse",
  "session.idle": "Stop",
  "session.deleted": "SessionEnd",
};

/** OpenCode's tools that write nothing of the checkout. */
const READS: ReadonlySet<string> = new Set([
  "read",
  "glob",
  "grep",
  "list",
  "todowrite",
  "todoread",
  "webfetch",
  "websearch",
  "codesearch",
  "skill",
  "question",
  "lsp",
  "plan_enter",
  "plan_exit",
  "invalid",
]);

function tool(name: string, args: Record<string, unknown>): Mapped | null {
  switch (name) {
    case "write":
      return { name: "Write", input: fileInput(args, ["filePath", "file_path"]) };
    case "edit":
    case "multiedit":
      return { name: "Edit", input: fileInput(args, ["filePath", "file_path"]) };
    case "apply_patch":
    case "patch": {
      const body = [args.patchText, args.patch, args.input].find((v) => typeof v === "string");
      return { name: "apply_patch", input: typeof body === "string" ? { input: body } : {} };
    }
    case "bash":
      return { name: "Bash", input: { command: args.command }, dir: args.workdir };
    case "task":
      return { name: "Agent", input: args };
    case "read":
      return readOf(args, ["filePath", "file_path"]);
  }
  if (READS.has(name)) return READ;
  // MCP tools are `<server>_<tool>` (measured: demo_touch); OpenCode's own have no underscore but apply_patch.
  const at = name.indexOf("_");
  if (at > 0 && at < name.length - 1) return mcpTool(name.slice(0, at), name.slice(at + 1), args);
  return null;
}

/** The text parts of a chat.message: the prompt as the person wrote it. */
function promptOf(output: Record<string, unknown>): string {
  const parts = Array.isArray(output.parts) ? output.parts : [];
  return parts
    .map((p) => obj(p))
    .filter((p) => p.type === "text" && typeof p.text === "string" && !p.synthetic)
    .map((p) => p.text as string)
    .join("\n");
}

export const OPENCODE: Dialect = {
  host: "opencode",
  label: "OpenCode",
  read(raw) {
    const event = EVENTS[str(raw.event) ?? ""];
    if (!event) return null;
    const input = obj(raw.input);
    const output = obj(raw.output);
    const info = obj(output.info);
    const session = str(input.sessionID) ?? str(output.sessionID) ?? str(info.id);
    const p: HookPayload = { hook_event_name: event, session_id: session, cwd: str(raw.directory) };
    if (event === "UserPromptSubmit") p.prompt = promptOf(output);
    if (event === "SessionStart") {
      const parent = str(info.parentID);
      return { p, version: str(info.version) ?? null, ...(parent ? { childOf: parent } : {}) };
    }
    if (event !== "PreToolUse" && event !== "PostToolUse") return { p };
    const name = str(input.tool) ?? "";
    const args = event === "PreToolUse" ? obj(output.args) : obj(input.args);
    const mapped = tool(name, args);
    if (!mapped)
      return { p: { ...p, tool_name: name, tool_input: {} }, unknownTool: name || "a tool without a name" };
    return { p: { ...p, cwd: runsIn(p.cwd, mapped.dir), tool_name: mapped.name, tool_input: mapped.input } };
  },
  deny: (reason) => ({ stdout: JSON.stringify({ decision: "deny", reason }), exitCode: 0 }),
  allow: () => JSON.stringify({ decision: "allow" }),
  // The plugin adds a chat.message's context to that session's system prompt, and a tool call's to its result.
  context: (event, text) =>
    event === "UserPromptSubmit" || event === "PostToolUse"
      ? JSON.stringify({ decision: "allow", context: text })
      : undefined,
  version: () => null,
};
