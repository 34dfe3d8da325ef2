import type { ToolKind } from "./guard.js";
import { patchTargets, shellPatchTargets } from "./patch.js";

/**
 * Which kind of tool a hook call names, and what it writes. Pure. Edit tools
 * name their targets; the opaque set's effects Cohent cannot see, so those
 * are held to the kill switch only.
 */

export const EDIT_TOOLS: ReadonlySet<string> = new Set([
  "Write",
  "Edit",
  "NotebookEdit",
  "MultiEdit",
  "apply_patch",
]);

export const OPAQUE_TOOLS: ReadonlySet<string> = new Set([
  "Bash",
  "BashOutput",
  "KillShell",
  "PowerShell",
  "shell",
  "exec_command",
  "unified_exec",
  "write_stdin",
  "run_terminal_cmd",
  "terminal",
  "Monitor",
  "TaskStop",
]);

/**
 * Cohent's own MCP tools (a server entry named "cohent", as `init` writes it)
 * are exempt like the adapter's own command, so that the protocol cannot
 * lock itself out: they only talk to the service, which refuses a paused
 * session's claims itself.
 */
export const OWN_MCP_PREFIX = "mcp__cohent__";

/** Edit, shell (opaque), or neither (reads, Cohent's own MCP tools, tools the table does not cover). */
export function toolKind(toolName: string): ToolKind | null {
  if (EDIT_TOOLS.has(toolName)) return "edit";
  if (toolName.startsWith(OWN_MCP_PREFIX)) return null;
  if (OPAQUE_TOOLS.has(toolName) || toolName.startsWith("mcp__")) return "shell";
  return null;
}

/** The command string of a shell-like tool call, when it has one. */
export function shellCommand(input: Record<string, unknown> | undefined): string | null {
  const raw = input?.command ?? input?.cmd;
  if (typeof raw === "string") return raw;
  if (Array.isArray(raw) && raw.every((x) => typeof x === "string")) {
    const [sh, flag, script] = raw as string[];
    if (raw.length === 3 && /(^|\/)(ba|z|)sh$/.test(sh!) && (flag === "-lc" || flag === "-c")) return script!;
    return (raw as string[])
      .map((a) => (/^[A-Za-z0-9_\-./=:,@%+]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
      .join(" ");
  }
  return null;
}

export interface ToolCall {
  kind: ToolKind | null;
  /** Raw edit targets as the tool names them; null when the edit's targets cannot be read. */
  targets: string[] | null;
  command: string | null;
}

/** Classifies a tool call: edit (with its targets), shell, or neither. An apply_patch through a shell is an edit. */
export function classify(toolName: string, input: Record<string, unknown> = {}): ToolCall {
  const kind = toolKind(toolName);
  if (kind === "edit") {
    if (toolName === "apply_patch") {
      const body = [input.command, input.input, input.patch].find((v) => typeof v === "string") as
        string | undefined;
      const targets = body ? patchTargets(body) : [];
      return { kind, targets: targets.length ? targets : null, command: null };
    }
    const file = [input.file_path, input.notebook_path, input.path].find((v) => typeof v === "string") as
      string | undefined;
    return { kind, targets: file ? [file] : null, command: null };
  }
  if (kind === "shell") {
    const command = shellCommand(input);
    const patched = command ? shellPatchTargets(command) : null;
    if (patched) return { kind: "edit", targets: patched.length ? patched : null, command };
    return { kind, targets: null, command };
  }
  return { kind: null, targets: null, command: null };
}

/** The fields Cohent reads from a Codex or Claude Code hook payload on stdin. */
export interface HookPayload {
  hook_event_name?: string;
  session_id?: string;
  cwd?: string;
  model?: string;
  prompt?: string;
  turn_id?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  /** Claude Code sub-agents: set on the calls a sub-agent makes, with the parent's session_id. */
  agent_id?: string;
  agent_type?: string;
  [k: string]: unknown;
}

/** Which client sent the payload: Claude Code sets CLAUDECODE; Codex sends a model and a turn id. */
export function clientOf(p: HookPayload, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.COHENT_CLIENT) return env.COHENT_CLIENT;
  if (
    env.CLAUDECODE === "1" ||
    env.CLAUDE_PROJECT_DIR ||
    typeof p.prompt_id === "string" ||
    typeof p.effort === "object"
  )
    return "Claude Code";
  if (typeof p.model === "string" || typeof p.turn_id === "string") return "Codex";
  return null;
}
