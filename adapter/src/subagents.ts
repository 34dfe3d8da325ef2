import type { HookPayload, HookResult } from "./hook.js";
import { readRuntime, updateSession } from "./runtime.js";

/**
 * Claude Code sub-agents (the `Agent` tool). Their tool calls reach the hooks
 * with the parent's session_id plus agent_id, so they are the parent
 * session's work: same intent, same scope. But Claude Code fires the main
 * agent's Stop while a background sub-agent still runs (measured on 2.1.197
 * and 2.1.332), and completing the intent then would refuse that
 * sub-agent's later writes. So the sub-agents seen since the last prompt are
 * tracked here; a Stop while any runs is held, and the intent completes when
 * the last SubagentStop arrives (or the next prompt supersedes it).
 */

const SPAWN_TOOLS = new Set(["Agent", "Task"]);

export function agentIdOf(p: HookPayload): string | null {
  return typeof p.agent_id === "string" && p.agent_id ? p.agent_id : null;
}

/** Before the hook: track sub-agents; a Stop with sub-agents running is answered here (held). */
export function beforeSubagentHook(p: HookPayload, root: string | null, sessionId: string): HookResult | null {
  if (!root) return null;
  const event = p.hook_event_name;
  const id = agentIdOf(p);
  try {
    if (event === "UserPromptSubmit") {
      if (readRuntime(root).sessions[sessionId]?.subagents) updateSession(root, sessionId, (s) => void delete s.subagents);
      return null;
    }
    if ((event === "PreToolUse" || event === "PostToolUse") && id) {
      updateSession(root, sessionId, (s) => {
        const t = (s.subagents ??= { ids: [], pending: 0 });
        if (!t.ids.includes(id)) {
          t.ids.push(id);
          t.pending = Math.max(0, t.pending - 1);
        }
      });
      return null;
    }
    if (event === "Stop" && !id) {
      let held = false;
      updateSession(root, sessionId, (s) => {
        const t = s.subagents;
        if (t && (t.ids.length > 0 || t.pending > 0)) held = t.stopHeld = true;
      });
      return held ? { exitCode: 0 } : null;
    }
  } catch {
    /* tracking is best effort; the guard itself does not depend on it */
  }
  return null;
}

/**
 * After the hook. An allowed spawn counts as pending until its first call is
 * seen. SubagentStop removes one; when none is left and a Stop was held, it
 * returns true: the caller then runs the held Stop.
 */
export function afterSubagentHook(p: HookPayload, root: string | null, sessionId: string, result: HookResult): boolean {
  if (!root) return false;
  const event = p.hook_event_name;
  try {
    if (event === "PreToolUse" && !agentIdOf(p) && SPAWN_TOOLS.has(p.tool_name ?? "") && !(result.stdout ?? "").includes('"deny"') && result.exitCode === 0) {
      updateSession(root, sessionId, (s) => void ((s.subagents ??= { ids: [], pending: 0 }).pending += 1));
      return false;
    }
    if (event === "SubagentStop") {
      const id = agentIdOf(p);
      let release = false;
      updateSession(root, sessionId, (s) => {
        const t = s.subagents;
        if (!t) return;
        const i = id ? t.ids.indexOf(id) : -1;
        if (i !== -1) t.ids.splice(i, 1);
        else if (t.pending > 0) t.pending -= 1;
        else t.ids.pop();
        if (t.ids.length === 0 && t.pending === 0) {
          release = !!t.stopHeld;
          delete s.subagents;
        }
      });
      return release;
    }
  } catch {
    /* see beforeSubagentHook */
  }
  return false;
}
