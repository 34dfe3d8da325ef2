import { agentIdOf, isSpawn } from "./subagents.js";
import { toolKind } from "./tools.js";
import { usageTarget } from "./usage.js";

/**
 * A PreToolUse call that hook.ts answers with silence whatever the session:
 * a tool that is neither an edit nor a shell (Read, Grep, Cohent's own MCP
 * tools), by the same table (tools.ts). A spawn (Agent, Task) is not one: the
 * hook counts it so that a main Stop waits for the sub-agent. The usage ledger, when on, records
 * every hook call, so then the bundle runs. The session's liveness is kept
 * by the PostToolUse call that follows every tool call.
 */
export function needsNoDecision(stdin: string): boolean {
  try {
    const p = JSON.parse(stdin) as {
      hook_event_name?: unknown;
      tool_name?: unknown;
      agent_id?: unknown;
    } | null;
    return (
      !!p &&
      p.hook_event_name === "PreToolUse" &&
      typeof p.tool_name === "string" &&
      toolKind(p.tool_name) === null &&
      !isSpawn(p.tool_name, agentIdOf(p)) &&
      !usageTarget().file
    );
  } catch {
    return false; // not JSON: the bundle refuses it with its reason
  }
}
