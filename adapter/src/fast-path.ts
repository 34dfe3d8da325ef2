import { agentIdOf, isSpawn } from "./subagents.js";
import { toolKind } from "./tools.js";
import { usageTarget } from "./usage.js";

/** What the loader reads off a hook payload before the bundle loads. */
export interface HookPreview {
  /**
   * A PreToolUse call that hook.ts answers with silence whatever the
   * session: a tool that is neither an edit nor a shell (Read, Grep, Cohent's
   * own MCP tools), by the same table (tools.ts). A spawn (Agent, Task) is
   * not one: the hook counts it so that a main Stop waits for the sub-agent.
   * The usage ledger, when on, records every hook call, so then the bundle
   * runs. The session's liveness is kept by the PostToolUse call that follows
   * every tool call.
   */
  needsNoDecision: boolean;
  /**
   * Which code the call will run: the event, and for a tool event the tool's
   * kind. Each path keeps a V8 code cache of its own (code-cache.ts), holding
   * the functions its first run compiled: an edit's decision compiled from a
   * cache that a prompt's run wrote costs ~3 ms more (bench/adapter-coldstart.ts).
   */
  path: string;
}

const EVENT = /^[A-Za-z]{1,32}$/;

export function previewHook(stdin: string): HookPreview {
  try {
    const p = JSON.parse(stdin) as {
      hook_event_name?: unknown;
      tool_name?: unknown;
      agent_id?: unknown;
    } | null;
    const event =
      p && typeof p.hook_event_name === "string" && EVENT.test(p.hook_event_name)
        ? p.hook_event_name
        : "other";
    const tool = p && typeof p.tool_name === "string" ? p.tool_name : null;
    const kind = tool === null ? null : toolKind(tool);
    const path = `hook-${event}${event === "PreToolUse" || event === "PostToolUse" ? `-${kind ?? "other"}` : ""}`;
    return {
      needsNoDecision:
        event === "PreToolUse" &&
        tool !== null &&
        kind === null &&
        !isSpawn(tool, agentIdOf(p!)) &&
        !usageTarget().file,
      path,
    };
  } catch {
    return { needsNoDecision: false, path: "hook-other" }; // not JSON: the bundle refuses it with its reason
  }
}
