import { ON_FAILURE_FROM, SPAWN_FREE_DIR } from "@cohent/client";
import { FAIL_CLOSED_REASON } from "../guard/guard.js";
import { failClosedCommand, HOOK_TIMEOUT } from "./host-wiring.js";
import type { HookHandler } from "./merge-files.js";

/**
 * Claude Code's wiring in .claude/settings.json. Every event runs the
 * command hook, except the two of every tool call (PreToolUse, PostToolUse):
 * there the guard runs in Cohent's stdio MCP server, which Claude Code
 * starts once per session and calls as an `mcp_tool` handler with
 * `"onFailure": "block"` (no Node process per call). Beside it a shell-only
 * gate runs the full command hook unless that server marked the session
 * (SPAWN_FREE_DIR): on 2.1.294 and older, onFailure is ignored and a failed
 * handler lets the call run (docs/clients.md), so there the
 * command hook keeps deciding. SessionStart and the rest stay command
 * hooks: Claude Code never calls an mcp_tool handler on SessionStart.
 */

export const CLAUDE_HOOK_COMMAND = 'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.cjs" hook --host claude';
export const CLAUDE_GUARD_COMMAND = failClosedCommand(CLAUDE_HOOK_COMMAND);

/** The payload fields the guard reads, as Claude Code's mcp_tool input placeholders (a missing one arrives as ""). */
const FIELDS = [
  "session_id",
  "cwd",
  "transcript_path",
  "permission_mode",
  "tool_name",
  "tool_input",
  "tool_use_id",
  "agent_id",
  "agent_type",
];

/** The mcp_tool handler: the guard tool of the server .mcp.json names `cohent`. */
export function claudeMcpHandler(event: "PreToolUse" | "PostToolUse"): HookHandler {
  const fields = event === "PostToolUse" ? [...FIELDS, "tool_response"] : FIELDS;
  return {
    type: "mcp_tool",
    server: "cohent",
    tool: "hook",
    input: { event, ...Object.fromEntries(fields.map((f) => [f, `\${${f}}`])) },
    timeout: HOOK_TIMEOUT,
    onFailure: "block",
  };
}

/**
 * The gate, in POSIX sh with no program of its own (a shell start, no
 * Node): it reads the payload's first line, takes session_id, and exits 0
 * with no answer when the server marked this session for this Claude Code
 * process ($PPID) AND this Claude Code refuses a call whose handler fails;
 * otherwise it hands the whole payload to the command hook. A session id it
 * cannot read, or one with other characters than letters, digits, - and _,
 * is never looked up: the command hook decides.
 *
 * The mark is a file, and the model's shell can write it (it knows the
 * session id and $PPID). So the gate trusts it only where a forged one opens
 * nothing: on a Claude Code that refuses the call when the mcp_tool handler
 * fails, the handler still decides every call. The version comes from
 * AI_AGENT (`claude-code_2-1-332_harness`), which Claude Code sets in its
 * hooks' environment and which nothing the model runs can change; missing,
 * unreadable or older: the command hook decides, mark or not.
 */
export function claudeGateScript(failClosed: boolean): string {
  const mark = `"\${CLAUDE_PROJECT_DIR:-.}/${SPAWN_FREE_DIR}/$s.$PPID"`;
  const run = `{ printf "%s\\n" "$p"; cat; } | ${CLAUDE_HOOK_COMMAND}`;
  const [ma, mi, pa] = ON_FAILURE_FROM;
  const honours = `[ "$a" -gt ${ma} ] || { [ "$a" -eq ${ma} ] && { [ "$b" -gt ${mi} ] || { [ "$b" -eq ${mi} ] && [ "$c" -ge ${pa} ]; }; }; }`;
  return [
    `IFS= read -r p`,
    `s=\${p#*\\"session_id\\":\\"}`,
    `s=\${s%%\\"*}`,
    `case \${AI_AGENT:-} in claude-code_*-*-*_harness) v=\${AI_AGENT#claude-code_}; v=\${v%_harness};; *) v=;; esac`,
    `a=\${v%%-*}; r=\${v#*-}; b=\${r%%-*}; c=\${r#*-}`,
    `case $a:$b:$c in *[!0-9:]*|:*|*::*|*:) ;; *) case $s in ""|*[!A-Za-z0-9_-]*) ;; *) [ -f ${mark} ] && { ${honours}; } && exit 0;; esac;; esac`,
    failClosed ? `${run} 2>/dev/null || { echo "${FAIL_CLOSED_REASON}" >&2; exit 2; }` : run,
  ].join("; ");
}

/**
 * The gate as the command Claude Code runs: POSIX sh whatever shell runs the
 * command, and `exec` so that the gate's $PPID is Claude Code itself. Claude
 * Code runs a command as `/bin/sh -c <command>`, and dash does not exec the
 * last command of -c: without it $PPID is that shell and no mark would ever
 * match (measured, 2.1.332, test/clients/spawn-free/FINDINGS.md).
 */
export const claudeGate = (failClosed: boolean) => `exec sh -c '${claudeGateScript(failClosed)}'`;

export const CLAUDE_PRE_GATE = claudeGate(true);
export const CLAUDE_POST_GATE = claudeGate(false);

/** Only PreToolUse fails closed: exit 2 blocks a prompt on UserPromptSubmit and keeps the agent running on Stop. */
export function claudeHandler(event: string): HookHandler | HookHandler[] {
  if (event === "PreToolUse")
    return [
      claudeMcpHandler("PreToolUse"),
      { type: "command", command: CLAUDE_PRE_GATE, timeout: HOOK_TIMEOUT, onFailure: "block" },
    ];
  if (event === "PostToolUse")
    return [claudeMcpHandler("PostToolUse"), { type: "command", command: CLAUDE_POST_GATE }];
  return { type: "command", command: CLAUDE_HOOK_COMMAND };
}
