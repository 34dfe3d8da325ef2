import { classify, deny, runHook, type HookPayload, type HookResult } from "./hook.js";
import { afterSubagentHook, beforeSubagentHook } from "./subagents.js";
import { readRuntime, updateSession } from "./runtime.js";

/**
 * The hook's own failure handling. Both clients run the tool when a hook
 * hangs past its timeout (shared/clients/FACTS.md), and macOS has no
 * `timeout` program, so the adapter keeps its own deadline, below the 30 s
 * the wiring gives the client, and answers a refusal itself. Events other
 * than PreToolUse fail soft (exit 2 would block a prompt, or keep the agent
 * running on Stop); a prompt whose publish did not finish is remembered, and
 * the next edit is refused until an intent is published again.
 */

export const DEADLINE_MS = Number(process.env.COHENT_HOOK_DEADLINE_MS) > 0 ? Number(process.env.COHENT_HOOK_DEADLINE_MS) : 25_000;

export const DEADLINE_REASON = `the guard did not reach a verdict within ${Math.round(DEADLINE_MS / 1000)} s (the Cohent service or this machine is too slow), so this tool call is refused. Try again; if it persists run node .cohent/cohent.mjs doctor`;

/**
 * Arms the deadline; `event` is read when it fires. On PreToolUse the answer
 * is a deny, on other events nothing. The timer holds the process open on
 * purpose: a promise that never settles would otherwise let node exit 0 with
 * no output, which both clients read as "allow". The returned function
 * disarms it once the answer is written.
 */
export function armDeadline(event: () => string | null, write: (s: string) => void): () => void {
  const timer = setTimeout(() => {
    const e = event();
    if (e === "PreToolUse" || e === null) write(deny(DEADLINE_REASON).stdout!);
    process.exit(0);
  }, DEADLINE_MS);
  return () => clearTimeout(timer);
}

export const MISSED_REASON =
  "the prompt hook could not publish this prompt to Cohent (the service was unreachable or the hook failed), so the work intent on record belongs to an earlier prompt and edits are refused. Publish this prompt's intent first: node .cohent/cohent.mjs intent '{\"objective\":\"…\",\"outputs\":[\"…\"],…}'";

function isEdit(p: HookPayload): boolean {
  return classify(p.tool_name ?? "", p.tool_input).kind === "edit";
}

/**
 * Before the hook runs. UserPromptSubmit: mark the publish as under way.
 * PreToolUse: a mark left over means the last publish was missed; the stale
 * intent is dropped (the agent's `intent` then publishes a fresh one) and
 * this edit is refused with the reason. Never throws.
 */
export function beforeHook(p: HookPayload, root: string | null, sessionId: string): HookResult | null {
  if (!root) return null;
  try {
    if (p.hook_event_name === "UserPromptSubmit") {
      updateSession(root, sessionId, (s) => void (s.publishing = { at: new Date().toISOString(), intentBefore: s.intentId ?? null }));
      return null;
    }
    if (p.hook_event_name !== "PreToolUse" || !readRuntime(root).sessions[sessionId]?.publishing) return null;
    let stale = false;
    updateSession(root, sessionId, (s) => {
      stale = !!s.intentId;
      delete s.publishing;
      delete s.intentId;
      delete s.action;
      s.scope = [];
      s.explicitScope = false;
    });
    // Without an earlier intent the guard's own reason (no intent, not configured) is the accurate one.
    return stale && isEdit(p) ? deny(MISSED_REASON) : null;
  } catch {
    return null;
  }
}

/** After UserPromptSubmit: the mark goes once the publish bound a new intent to the session. */
export function afterHook(p: HookPayload, root: string | null, sessionId: string): void {
  if (!root || p.hook_event_name !== "UserPromptSubmit") return;
  try {
    updateSession(root, sessionId, (s) => {
      if (s.publishing && s.intentId && s.intentId !== s.publishing.intentBefore) delete s.publishing;
    });
  } catch {
    /* the mark stays: the next edit is refused until an intent is published */
  }
}

/**
 * The hook entry around runHook: the missed-publish mark, sub-agent
 * tracking, and a catch for anything that escapes, so that the model reads
 * one short line and never a stack trace. `seen` learns the event name for
 * the deadline.
 */
export async function runGuardedHook(stdin: string, root: string | null, seen: (event: string) => void): Promise<HookResult> {
  let p: HookPayload | null = null;
  try {
    p = JSON.parse(stdin) as HookPayload;
  } catch {
    /* runHook answers a payload that is not JSON */
  }
  const event = p && typeof p === "object" && typeof p.hook_event_name === "string" ? p.hook_event_name : "";
  seen(event);
  try {
    if (!p || typeof p !== "object") return await runHook(stdin, root);
    const sessionId = typeof p.session_id === "string" && p.session_id ? p.session_id : "unknown-session";
    const early = beforeHook(p, root, sessionId) ?? beforeSubagentHook(p, root, sessionId);
    if (early) return early;
    const result = scrubPaths(await runHook(stdin, root), root);
    afterHook(p, root, sessionId);
    if (afterSubagentHook(p, root, sessionId, result)) await runHook(JSON.stringify({ ...p, hook_event_name: "Stop" }), root);
    return result;
  } catch (err) {
    const what = err instanceof Error ? err.name : "error";
    if (event === "PreToolUse") return deny(`the adapter failed (${what}), so this tool call is refused. Run node .cohent/cohent.mjs doctor`);
    return { exitCode: 0 };
  }
}

/**
 * What the model reads names no absolute path of this machine: the
 * checkout's root becomes `.`, the home directory `~` (an error message of
 * the adapter may carry either, e.g. a stuck lock file).
 */
export function scrubPaths(result: HookResult, root: string | null, home = process.env.HOME ?? ""): HookResult {
  const scrub = (text: string | undefined) => {
    if (!text) return text;
    let out = text;
    if (root && root.length > 1) out = out.split(root).join(".");
    if (home && home.length > 1) out = out.split(home).join("~");
    return out;
  };
  const stdout = scrub(result.stdout);
  const stderr = scrub(result.stderr);
  return { ...result, ...(stdout !== undefined ? { stdout } : {}), ...(stderr !== undefined ? { stderr } : {}) };
}
