import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { render } from "../../adapter/src/transports/hook-answer.js";
import { detect, hostFlag } from "../../adapter/src/hosts/detect.js";
import { classify } from "../../adapter/src/guard/tools.js";

/**
 * The dialects as a table (issue 24): every payload recorded from the real
 * clients (and Cursor's documented ones) read by its host's dialect, as
 * the event the hook acts on, the tool's kind in the guard's terms and its
 * edit targets. "-" is an event the hook leaves alone. A new fixture
 * without a row fails, so a client's new payload is looked at, not let
 * through by default.
 */

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "../adapter/fixtures/payloads");

const EXPECTED: Record<string, string> = {
  "codex@0.169.0/PostToolUse-Bash-workdir-link": "PostToolUse Bash:shell",
  "codex@0.169.0/PostToolUse-Bash-workdir": "PostToolUse Bash:shell",
  "codex@0.169.0/PostToolUse-Bash": "PostToolUse Bash:shell",
  "codex@0.169.0/PreToolUse-Bash-workdir-absolute": "PreToolUse Bash:shell",
  "codex@0.169.0/PreToolUse-Bash-workdir-link": "PreToolUse Bash:shell",
  "codex@0.169.0/PreToolUse-Bash-workdir": "PreToolUse Bash:shell",
  "codex@0.169.0/PreToolUse-Bash": "PreToolUse Bash:shell",
  "codex@0.171.0/PostToolUse-Bash-workdir-link": "PostToolUse Bash:shell",
  "codex@0.171.0/PostToolUse-Bash-workdir": "PostToolUse Bash:shell",
  "codex@0.171.0/PostToolUse-Bash": "PostToolUse Bash:shell",
  "codex@0.171.0/PreToolUse-Bash-workdir-absolute": "PreToolUse Bash:shell",
  "codex@0.171.0/PreToolUse-Bash-workdir-link": "PreToolUse Bash:shell",
  "codex@0.171.0/PreToolUse-Bash-workdir": "PreToolUse Bash:shell",
  "codex@0.171.0/PreToolUse-Bash": "PreToolUse Bash:shell",
  "copilot@1.0.102/agentStop-subagent": "-",
  "copilot@1.0.102/agentStop": "Stop",
  "copilot@1.0.102/permissionRequest-bash-subagent": "-",
  "copilot@1.0.102/permissionRequest-bash": "-",
  "copilot@1.0.102/permissionRequest-edit-subagent": "-",
  "copilot@1.0.102/permissionRequest-edit": "-",
  "copilot@1.0.102/postToolUse-apply_patch-subagent": "PostToolUse apply_patch:edit sub2.txt sub-agent",
  "copilot@1.0.102/postToolUse-apply_patch": "PostToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.102/postToolUse-bash-subagent": "PostToolUse Bash:shell sub-agent",
  "copilot@1.0.102/postToolUse-bash": "PostToolUse Bash:shell",
  "copilot@1.0.102/postToolUse-task": "PostToolUse Agent:none",
  "copilot@1.0.102/postToolUse-view": "PostToolUse Read:none",
  "copilot@1.0.102/preToolUse-apply_patch-subagent": "PreToolUse apply_patch:edit sub2.txt sub-agent",
  "copilot@1.0.102/preToolUse-apply_patch": "PreToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.102/preToolUse-bash-subagent": "PreToolUse Bash:shell sub-agent",
  "copilot@1.0.102/preToolUse-bash": "PreToolUse Bash:shell",
  "copilot@1.0.102/preToolUse-demo-touch": "PreToolUse mcp__demo__touch:shell",
  "copilot@1.0.102/preToolUse-task": "PreToolUse Agent:none",
  "copilot@1.0.102/preToolUse-view": "PreToolUse Read:none",
  "copilot@1.0.102/sessionEnd": "SessionEnd",
  "copilot@1.0.102/sessionStart": "SessionStart",
  "copilot@1.0.102/subagentStart": "-",
  "copilot@1.0.102/subagentStop": "SubagentStop sub-agent",
  "copilot@1.0.102/userPromptSubmitted-subagent": "-",
  "copilot@1.0.102/userPromptSubmitted": "UserPromptSubmit",
  "copilot@1.0.102/claude-settings/PostToolUse-Agent": "PostToolUse Agent:none",
  "copilot@1.0.102/claude-settings/PostToolUse-Bash-subagent": "PostToolUse Bash:shell sub-agent",
  "copilot@1.0.102/claude-settings/PostToolUse-Bash": "PostToolUse Bash:shell",
  "copilot@1.0.102/claude-settings/PostToolUse-Edit": "PostToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.102/claude-settings/PostToolUse-Read": "PostToolUse Read:none",
  "copilot@1.0.102/claude-settings/PreToolUse-Agent": "PreToolUse Agent:none",
  "copilot@1.0.102/claude-settings/PreToolUse-Bash-subagent": "PreToolUse Bash:shell sub-agent",
  "copilot@1.0.102/claude-settings/PreToolUse-Bash": "PreToolUse Bash:shell",
  "copilot@1.0.102/claude-settings/PreToolUse-Edit": "PreToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.102/claude-settings/PreToolUse-Read": "PreToolUse Read:none",
  "copilot@1.0.102/claude-settings/SessionEnd": "SessionEnd",
  "copilot@1.0.102/claude-settings/SessionStart": "SessionStart",
  "copilot@1.0.102/claude-settings/Stop-subagent": "-",
  "copilot@1.0.102/claude-settings/Stop": "Stop",
  "copilot@1.0.102/claude-settings/SubagentStart": "-",
  "copilot@1.0.102/claude-settings/SubagentStop": "SubagentStop sub-agent",
  "copilot@1.0.102/claude-settings/UserPromptSubmit-subagent": "-",
  "copilot@1.0.102/claude-settings/UserPromptSubmit": "UserPromptSubmit",
  "copilot@1.0.102/claude-settings/permissionRequest-bash-subagent": "-",
  "copilot@1.0.102/claude-settings/permissionRequest-bash": "-",
  "copilot@1.0.102/claude-settings/permissionRequest-edit": "-",
  "copilot@1.0.85/agentStop-subagent": "Stop",
  "copilot@1.0.85/agentStop": "Stop",
  "copilot@1.0.85/permissionRequest-bash": "-",
  "copilot@1.0.85/permissionRequest-edit": "-",
  "copilot@1.0.85/postToolUse-apply_patch-subagent": "PostToolUse apply_patch:edit sub2.txt",
  "copilot@1.0.85/postToolUse-apply_patch": "PostToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.85/postToolUse-bash-subagent": "PostToolUse Bash:shell",
  "copilot@1.0.85/postToolUse-bash": "PostToolUse Bash:shell",
  "copilot@1.0.85/postToolUse-task": "PostToolUse Agent:none",
  "copilot@1.0.85/postToolUse-view": "PostToolUse Read:none",
  "copilot@1.0.85/preToolUse-apply_patch-subagent": "PreToolUse apply_patch:edit sub2.txt",
  "copilot@1.0.85/preToolUse-apply_patch": "PreToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.85/preToolUse-bash-subagent": "PreToolUse Bash:shell",
  "copilot@1.0.85/preToolUse-bash": "PreToolUse Bash:shell",
  "copilot@1.0.85/preToolUse-demo-touch": "PreToolUse mcp__demo__touch:shell",
  "copilot@1.0.85/preToolUse-task": "PreToolUse Agent:none",
  "copilot@1.0.85/preToolUse-view": "PreToolUse Read:none",
  "copilot@1.0.85/sessionEnd": "SessionEnd",
  "copilot@1.0.85/sessionStart": "SessionStart",
  "copilot@1.0.85/subagentStart": "-",
  "copilot@1.0.85/subagentStop": "SubagentStop sub-agent",
  "copilot@1.0.85/userPromptSubmitted-subagent": "UserPromptSubmit",
  "copilot@1.0.85/userPromptSubmitted": "UserPromptSubmit",
  "copilot@1.0.85/claude-settings/PostToolUse-Agent": "PostToolUse Agent:none",
  "copilot@1.0.85/claude-settings/PostToolUse-Bash-subagent": "PostToolUse Bash:shell",
  "copilot@1.0.85/claude-settings/PostToolUse-Bash": "PostToolUse Bash:shell",
  "copilot@1.0.85/claude-settings/PostToolUse-Edit": "PostToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.85/claude-settings/PostToolUse-Read": "PostToolUse Read:none",
  "copilot@1.0.85/claude-settings/PreToolUse-Agent": "PreToolUse Agent:none",
  "copilot@1.0.85/claude-settings/PreToolUse-Bash-subagent": "PreToolUse Bash:shell",
  "copilot@1.0.85/claude-settings/PreToolUse-Bash": "PreToolUse Bash:shell",
  "copilot@1.0.85/claude-settings/PreToolUse-Edit": "PreToolUse apply_patch:edit src/new.ts",
  "copilot@1.0.85/claude-settings/PreToolUse-Read": "PreToolUse Read:none",
  "copilot@1.0.85/claude-settings/SessionEnd": "SessionEnd",
  "copilot@1.0.85/claude-settings/SessionStart": "SessionStart",
  "copilot@1.0.85/claude-settings/Stop-subagent": "Stop",
  "copilot@1.0.85/claude-settings/Stop": "Stop",
  "copilot@1.0.85/claude-settings/SubagentStart": "-",
  "copilot@1.0.85/claude-settings/SubagentStop": "SubagentStop sub-agent",
  "copilot@1.0.85/claude-settings/UserPromptSubmit-subagent": "UserPromptSubmit",
  "copilot@1.0.85/claude-settings/UserPromptSubmit": "UserPromptSubmit",
  "copilot@1.0.85/claude-settings/permissionRequest-bash": "-",
  "copilot@1.0.85/claude-settings/permissionRequest-edit": "-",
  "cursor@documented/afterFileEdit": "PostToolUse Write:edit /repo/src/app.ts",
  "cursor@documented/beforeMCPExecution": "PreToolUse mcp__cursor__touch:shell",
  "cursor@documented/beforeReadFile": "PreToolUse Read:none",
  "cursor@documented/beforeShellExecution": "PreToolUse Bash:shell",
  "cursor@documented/beforeSubmitPrompt": "UserPromptSubmit",
  "cursor@documented/preToolUse-Edit": "PreToolUse Edit:edit /repo/src/app.ts",
  "cursor@documented/preToolUse-Grep": "PreToolUse Read:none",
  "cursor@documented/preToolUse-MCP-touch": "PreToolUse mcp__cursor__touch:shell",
  "cursor@documented/preToolUse-Read": "PreToolUse Read:none",
  "cursor@documented/preToolUse-Shell": "PreToolUse Bash:shell",
  "cursor@documented/preToolUse-StrReplace": "PreToolUse Edit:edit /repo/src/app.ts",
  "cursor@documented/preToolUse-Task": "PreToolUse Read:none",
  "cursor@documented/preToolUse-Write": "PreToolUse Write:edit /repo/src/new.ts",
  "cursor@documented/preToolUse-no-tool_name-StrReplace": "PreToolUse Edit:edit /repo/src/app.ts",
  "cursor@documented/preToolUse-no-tool_name-Write": "PreToolUse Write:edit /repo/src/new.ts",
  "cursor@documented/sessionEnd": "SessionEnd",
  "cursor@documented/sessionStart": "SessionStart",
  "cursor@documented/stop": "Stop",
  "cursor@documented/subagentStart": "-",
  "cursor@documented/subagentStop": "-",
  "gemini@0.58.0/AfterAgent": "Stop",
  "gemini@0.58.0/AfterModel": "-",
  "gemini@0.58.0/AfterTool-invoke_agent": "PostToolUse Read:none",
  "gemini@0.58.0/AfterTool-read_file": "PostToolUse Read:none",
  "gemini@0.58.0/AfterTool-replace": "PostToolUse Edit:edit /repo/src/app.ts",
  "gemini@0.58.0/AfterTool-run_shell_command-subagent": "PostToolUse Bash:shell",
  "gemini@0.58.0/AfterTool-run_shell_command": "PostToolUse Bash:shell",
  "gemini@0.58.0/AfterTool-write_file": "PostToolUse Write:edit /repo/src/new.ts",
  "gemini@0.58.0/BeforeAgent": "UserPromptSubmit",
  "gemini@0.58.0/BeforeModel": "-",
  "gemini@0.58.0/BeforeTool-invoke_agent": "PreToolUse Read:none",
  "gemini@0.58.0/BeforeTool-mcp_demo_touch": "PreToolUse mcp__demo__touch:shell",
  "gemini@0.58.0/BeforeTool-read_file": "PreToolUse Read:none",
  "gemini@0.58.0/BeforeTool-replace": "PreToolUse Edit:edit /repo/src/app.ts",
  "gemini@0.58.0/BeforeTool-run_shell_command-subagent": "PreToolUse Bash:shell",
  "gemini@0.58.0/BeforeTool-run_shell_command": "PreToolUse Bash:shell",
  "gemini@0.58.0/BeforeTool-write_file": "PreToolUse Write:edit /repo/src/new.ts",
  "gemini@0.58.0/BeforeToolSelection": "-",
  "gemini@0.58.0/PreCompress": "-",
  "gemini@0.58.0/SessionEnd": "SessionEnd",
  "gemini@0.58.0/SessionStart": "SessionStart",
  "gemini@0.61.0/AfterAgent": "Stop",
  "gemini@0.61.0/AfterModel": "-",
  "gemini@0.61.0/AfterTool-invoke_agent": "PostToolUse Read:none",
  "gemini@0.61.0/AfterTool-read_file": "PostToolUse Read:none",
  "gemini@0.61.0/AfterTool-replace": "PostToolUse Edit:edit /repo/src/app.ts",
  "gemini@0.61.0/AfterTool-run_shell_command-subagent": "PostToolUse Bash:shell",
  "gemini@0.61.0/AfterTool-run_shell_command": "PostToolUse Bash:shell",
  "gemini@0.61.0/AfterTool-write_file": "PostToolUse Write:edit /repo/src/new.ts",
  "gemini@0.61.0/BeforeAgent": "UserPromptSubmit",
  "gemini@0.61.0/BeforeModel": "-",
  "gemini@0.61.0/BeforeTool-invoke_agent": "PreToolUse Read:none",
  "gemini@0.61.0/BeforeTool-mcp_demo_touch": "PreToolUse mcp__demo__touch:shell",
  "gemini@0.61.0/BeforeTool-read_file": "PreToolUse Read:none",
  "gemini@0.61.0/BeforeTool-replace": "PreToolUse Edit:edit /repo/src/app.ts",
  "gemini@0.61.0/BeforeTool-run_shell_command-subagent": "PreToolUse Bash:shell",
  "gemini@0.61.0/BeforeTool-run_shell_command": "PreToolUse Bash:shell",
  "gemini@0.61.0/BeforeTool-write_file": "PreToolUse Write:edit /repo/src/new.ts",
  "gemini@0.61.0/BeforeToolSelection": "-",
  "gemini@0.61.0/PreCompress": "-",
  "gemini@0.61.0/SessionEnd": "SessionEnd",
  "gemini@0.61.0/SessionStart": "SessionStart",
  "opencode@1.15.13/chat.message-subagent": "UserPromptSubmit",
  "opencode@1.15.13/chat.message": "UserPromptSubmit",
  "opencode@1.15.13/chat.params-subagent": "-",
  "opencode@1.15.13/chat.params": "-",
  "opencode@1.15.13/event-file.edited": "-",
  "opencode@1.15.13/event-file.watcher.updated": "-",
  "opencode@1.15.13/event-message.updated-subagent": "-",
  "opencode@1.15.13/event-message.updated": "-",
  "opencode@1.15.13/event-server.instance.disposed": "-",
  "opencode@1.15.13/event-session.created-subagent": "SessionStart child",
  "opencode@1.15.13/event-session.created": "SessionStart",
  "opencode@1.15.13/event-session.diff-subagent": "-",
  "opencode@1.15.13/event-session.diff": "-",
  "opencode@1.15.13/event-session.idle-subagent": "Stop",
  "opencode@1.15.13/event-session.idle": "Stop",
  "opencode@1.15.13/event-session.next.agent.switched-subagent": "-",
  "opencode@1.15.13/event-session.next.agent.switched": "-",
  "opencode@1.15.13/event-session.next.model.switched-subagent": "-",
  "opencode@1.15.13/event-session.next.model.switched": "-",
  "opencode@1.15.13/event-session.status-subagent": "-",
  "opencode@1.15.13/event-session.status": "-",
  "opencode@1.15.13/event-session.updated-subagent": "-",
  "opencode@1.15.13/event-session.updated": "-",
  "opencode@1.15.13/init": "-",
  "opencode@1.15.13/tool.execute.after-bash-subagent": "PostToolUse Bash:shell",
  "opencode@1.15.13/tool.execute.after-bash": "PostToolUse Bash:shell",
  "opencode@1.15.13/tool.execute.after-edit": "PostToolUse Edit:edit /repo/src/app.ts",
  "opencode@1.15.13/tool.execute.after-read": "PostToolUse Read:none",
  "opencode@1.15.13/tool.execute.after-task": "PostToolUse Agent:none",
  "opencode@1.15.13/tool.execute.after-write": "PostToolUse Write:edit /repo/src/new.ts",
  "opencode@1.15.13/tool.execute.before-apply_patch": "PreToolUse apply_patch:edit src/patched.ts",
  "opencode@1.15.13/tool.execute.before-bash-subagent": "PreToolUse Bash:shell",
  "opencode@1.15.13/tool.execute.before-bash": "PreToolUse Bash:shell",
  "opencode@1.15.13/tool.execute.before-demo_touch": "PreToolUse mcp__demo__touch:shell",
  "opencode@1.15.13/tool.execute.before-edit": "PreToolUse Edit:edit /repo/src/app.ts",
  "opencode@1.15.13/tool.execute.before-read": "PreToolUse Read:none",
  "opencode@1.15.13/tool.execute.before-task": "PreToolUse Agent:none",
  "opencode@1.15.13/tool.execute.before-write": "PreToolUse Write:edit /repo/src/new.ts",
  "opencode@1.18.33/chat.message-subagent": "UserPromptSubmit",
  "opencode@1.18.33/chat.message": "UserPromptSubmit",
  "opencode@1.18.33/chat.params-subagent": "-",
  "opencode@1.18.33/chat.params": "-",
  "opencode@1.18.33/event-file.edited": "-",
  "opencode@1.18.33/event-file.watcher.updated": "-",
  "opencode@1.18.33/event-message.updated-subagent": "-",
  "opencode@1.18.33/event-message.updated": "-",
  "opencode@1.18.33/event-session.created-subagent": "SessionStart child",
  "opencode@1.18.33/event-session.created": "SessionStart",
  "opencode@1.18.33/event-session.diff-subagent": "-",
  "opencode@1.18.33/event-session.diff": "-",
  "opencode@1.18.33/event-session.idle-subagent": "Stop",
  "opencode@1.18.33/event-session.idle": "Stop",
  "opencode@1.18.33/event-session.status-subagent": "-",
  "opencode@1.18.33/event-session.status": "-",
  "opencode@1.18.33/event-session.updated-subagent": "-",
  "opencode@1.18.33/event-session.updated": "-",
  "opencode@1.18.33/init": "-",
  "opencode@1.18.33/tool.execute.after-bash-subagent": "PostToolUse Bash:shell",
  "opencode@1.18.33/tool.execute.after-bash": "PostToolUse Bash:shell",
  "opencode@1.18.33/tool.execute.after-edit": "PostToolUse Edit:edit /repo/src/app.ts",
  "opencode@1.18.33/tool.execute.after-read": "PostToolUse Read:none",
  "opencode@1.18.33/tool.execute.after-task": "PostToolUse Agent:none",
  "opencode@1.18.33/tool.execute.after-write": "PostToolUse Write:edit /repo/src/new.ts",
  "opencode@1.18.33/tool.execute.before-apply_patch": "PreToolUse apply_patch:edit src/patched.ts",
  "opencode@1.18.33/tool.execute.before-bash-subagent": "PreToolUse Bash:shell",
  "opencode@1.18.33/tool.execute.before-bash": "PreToolUse Bash:shell",
  "opencode@1.18.33/tool.execute.before-demo_touch": "PreToolUse mcp__demo__touch:shell",
  "opencode@1.18.33/tool.execute.before-edit": "PreToolUse Edit:edit /repo/src/app.ts",
  "opencode@1.18.33/tool.execute.before-read": "PreToolUse Read:none",
  "opencode@1.18.33/tool.execute.before-task": "PreToolUse Agent:none",
  "opencode@1.18.33/tool.execute.before-write": "PreToolUse Write:edit /repo/src/new.ts",
};

/** The fixture as the hook gets it: OpenCode's through the plugin's {event, input, output, directory}. */
function stdinOf(dir: string, file: string): Record<string, unknown> {
  const raw = JSON.parse(readFileSync(path.join(ROOT, dir, `${file}.json`), "utf8"));
  if (!dir.startsWith("opencode")) return raw;
  if (raw.type) return { event: raw.type, input: {}, output: raw.properties, directory: "/repo" };
  return { event: file.replace(/-.*$/, ""), ...raw, directory: "/repo" };
}

function line(dir: string, file: string): string {
  const host = dir.split("@")[0]!;
  const flag = dir.includes("claude-settings") ? "claude" : host;
  const env = host === "copilot" ? { COPILOT_CLI: "1" } : {};
  const raw = stdinOf(dir, file);
  const r = detect(flag, raw, env)!.dialect.read(raw, env);
  if (!r) return "-";
  const c = r.p.tool_name ? classify(r.p.tool_name, r.p.tool_input) : null;
  return [
    r.p.hook_event_name,
    c ? `${r.p.tool_name}:${c.kind ?? "none"}` : "",
    c?.targets?.join(",") ?? "",
    r.p.agent_id ? "sub-agent" : "",
    r.childOf ? "child" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

const FIXTURES = readdirSync(ROOT).flatMap((dir) => {
  const dirs = [dir, ...(dir.startsWith("copilot") ? [path.join(dir, "claude-settings")] : [])];
  return dirs.flatMap((d) =>
    readdirSync(path.join(ROOT, d))
      .filter((f) => f.endsWith(".json"))
      .map((f) => `${d}/${f.replace(/\.json$/, "")}`),
  );
});

describe("every recorded payload, read in its host's dialect", () => {
  it("has a row, and the table has no row without a payload", () => {
    expect(FIXTURES.filter((f) => !(f in EXPECTED))).toEqual([]);
    expect(Object.keys(EXPECTED).filter((f) => !FIXTURES.includes(f))).toEqual([]);
  });
  it.each(FIXTURES)("%s", (f) => {
    const dir = path.dirname(f);
    expect(line(dir, path.basename(f))).toBe(EXPECTED[f]);
  });
});

describe("the sub-agents' sessions", () => {
  it("Copilot 1.0.102: a sub-agent's call is its parent's session, with its own id as agent", () => {
    const raw = stdinOf("copilot@1.0.102", "preToolUse-apply_patch-subagent");
    const r = detect("copilot", raw, {})!.dialect.read(raw, {})!;
    expect(r.p.session_id).toBe(raw.parentAgentId);
    expect(r.p.agent_id).toBe(raw.agentId);
  });
  it("Copilot 1.0.85 names no parent: the sub-agent is a session of its own (held to its own intent)", () => {
    const raw = stdinOf("copilot@1.0.85", "preToolUse-apply_patch-subagent");
    const r = detect("copilot", raw, {})!.dialect.read(raw, {})!;
    expect(r.p.session_id).toBe(raw.sessionId);
    expect(r.p.agent_id).toBeUndefined();
  });
  it("OpenCode: a child session's start names its parent", () => {
    const raw = stdinOf("opencode@1.18.33", "event-session.created-subagent");
    const r = detect("opencode", raw, {})!.dialect.read(raw, {})!;
    expect(r.childOf).toBe((raw.output as any).info.parentID);
  });
});

describe("which dialect answers", () => {
  const cursorWrite = stdinOf("cursor@documented", "preToolUse-Write");
  const copilotEdit = stdinOf("copilot@1.0.102/claude-settings", "PreToolUse-Edit");
  const claudeWrite = { hook_event_name: "PreToolUse", session_id: "s", tool_name: "Write", tool_input: {} };
  it.each([
    ["claude", claudeWrite, {}, "Claude Code", "fail-closed"],
    ["codex", claudeWrite, {}, "Codex", "fail-closed"],
    ["claude", cursorWrite, {}, "Cursor (through .claude/settings.json)", "foreign"],
    ["claude", copilotEdit, { COPILOT_CLI: "1" }, "Copilot CLI (through .claude/settings.json)", "foreign"],
    ["cursor", cursorWrite, {}, "Cursor", "fail-closed"],
    [null, cursorWrite, {}, "Cursor", "modified"],
    [null, claudeWrite, {}, "Claude Code", "fail-closed"],
    [null, stdinOf("copilot@1.0.102", "preToolUse-bash"), {}, "Copilot CLI", "modified"],
  ] as const)("--host %s", (flag, raw, env, label, wiring) => {
    const d = detect(flag, raw as Record<string, unknown>, env)!;
    expect([d.dialect.label, d.wiring]).toEqual([label, wiring]);
  });
  it("a host no table knows has no dialect", () => {
    expect(detect("windsurf", claudeWrite, {})).toBeNull();
    expect(detect("", claudeWrite, {})).toBeNull();
  });
  it.each([
    [["hook", "--host", "gemini"], "gemini"],
    [["hook", "--host=cursor"], "cursor"],
    [["hook", "--host"], ""],
    [["hook"], null],
  ])("hostFlag(%j) = %j", (argv, flag) => expect(hostFlag(argv)).toBe(flag));
});

describe("each host's deny, allow and context, as it reads them", () => {
  const answer = { exitCode: 0, injected: 0 };
  const deny = { ...answer, deny: "Cohent: no" };
  const ctx = { ...answer, context: "peers", injected: 5 };
  const d = (flag: string, raw: Record<string, unknown> = {}, env = {}) => detect(flag, raw, env)!.dialect;
  it.each([
    [
      "claude",
      {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "Cohent: no",
        },
      },
    ],
    ["copilot", { permissionDecision: "deny", permissionDecisionReason: "Cohent: no" }],
    ["gemini", { decision: "deny", reason: "Cohent: no" }],
    ["cursor", { permission: "deny", user_message: "Cohent: no", agent_message: "Cohent: no" }],
    ["opencode", { decision: "deny", reason: "Cohent: no" }],
  ])("%s: deny", (flag, shape) => {
    const out = render(d(flag), "PreToolUse", deny);
    expect([out.exitCode, JSON.parse(out.stdout!)]).toEqual([0, shape]);
  });
  it.each([
    ["claude", undefined],
    ["copilot", undefined],
    ["gemini", undefined],
    ["cursor", '{"permission":"allow"}'],
    ["opencode", '{"decision":"allow"}'],
  ])("%s: an allowed tool call prints %s", (flag, stdout) => {
    expect(render(d(flag), "PreToolUse", answer).stdout).toBe(stdout);
  });
  // A prompt's context, and a tool call's (a packet after PostToolUse): which hosts put them before the model.
  it.each(
    (["UserPromptSubmit", "PostToolUse"] as const).flatMap((event) =>
      (
        [
          ["claude", true],
          ["codex", true],
          ["gemini", true],
          ["opencode", true],
          ["copilot", false],
          ["cursor", false],
        ] as const
      ).map(([flag, reaches]) => [flag, event, reaches] as const),
    ),
  )("%s: the context at %s reaches the model: %s", (flag, event, reaches) => {
    const out = render(d(flag), event, ctx);
    expect([!!out.stdout, out.injected > 0]).toEqual([reaches, reaches]);
    if (reaches) expect(out.stdout).toContain("peers");
  });
});
