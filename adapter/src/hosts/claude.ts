import type { Host } from "@cohent/protocol/hosts";
import type { HookPayload } from "../guard/tools.js";
import { claudeContext, claudeDeny, type Dialect, type HookEvent } from "./dialect.js";

/**
 * Codex and Claude Code: the payload is already in the guard's shape
 * (docs/clients.md), and a deny is hookSpecificOutput with a
 * reason, at exit 0 (both fail open on anything less). Their tools are
 * classified by tools.ts's tables as they always were: an unlisted tool of
 * theirs is a read (measured on four versions; refusing every tool a new
 * release adds would stop agents for no write). Codex's `cwd` is already
 * where a shell call runs: its exec_command `workdir` joined to the
 * session's directory, not followed through links (measured on 0.169.0
 * and 0.171.0; tool_input holds the command alone). Claude Code's Bash
 * names no directory: a `cd` that persists shows in the next call's cwd.
 */

const INJECTS: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "PostToolUse"]);

function claudeLike(host: Host, label: string): Dialect {
  return {
    host,
    label,
    read: (raw) => ({ p: raw as HookPayload }),
    deny: (reason) => ({ stdout: JSON.stringify(claudeDeny(reason)), exitCode: 0 }),
    allow: () => undefined,
    context: (event, text) => (INJECTS.has(event) ? claudeContext(event, text) : undefined),
    // PostToolUse's block: the reason goes to the model as the call's feedback (Claude Code's hook reference; Codex's output schema has the same fields).
    caught: (reason) => JSON.stringify({ decision: "block", reason }),
    version: () => null,
  };
}

export const CLAUDE = claudeLike("claude", "Claude Code");
export const CODEX = claudeLike("codex", "Codex");
