import { isAbsolute, resolve } from "node:path";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import * as client from "./client.js";
import { parseExemptCommand } from "./exemption.js";
import type { Watch } from "./deadline.js";
import {
  adapterFailed,
  hookFailed,
  missedPublish,
  NOTICE,
  onStop,
  PAYLOAD_NOT_JSON,
  publishBound,
  publishMark,
  type Verdict,
} from "./guard.js";
import { guard } from "./guard-shell.js";
import { perform } from "./operations.js";
import { redact, scrubPaths } from "./redact.js";
import { relay } from "./relay.js";
import { SessionFile } from "./runtime.js";
import { agentIdOf, held, isSpawn, seen, spawned, stopped, type Subagents } from "./subagents.js";
import { classify } from "./tools.js";

/**
 * `hook`: one Codex or Claude Code hook payload on stdin, one answer on
 * stdout. A transport: it parses the payload, calls the guard or the
 * operation layer, and renders. A deny is always the JSON
 * hookSpecificOutput form with a non-empty reason (both clients fail open
 * on anything less). runtime.json is read once per call and written at
 * most once (SessionFile), also when the call fails or runs out of time:
 * the missed-publish mark and the sub-agent tracking ride on that one write.
 */

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

/** The answer, and what it did, so that the caller never re-reads its own output. */
export interface HookResult {
  stdout?: string;
  stderr?: string;
  exitCode: number;
  event: string;
  client: string | null;
  model: string | null;
  /** The sub-agent that made the call, if one did. */
  agentId: string | null;
  /** The PreToolUse verdict, when there was one. */
  verdict?: Verdict;
  /** Characters of context injected into the agent. */
  injected: number;
}

type Answer = Pick<HookResult, "stdout" | "stderr" | "exitCode" | "verdict" | "injected">;
const SILENT: Answer = { exitCode: 0, injected: 0 };

export function deny(verdict: Verdict & { permission: "deny" }): Answer {
  const permissionDecisionReason = `Cohent: ${verdict.reason.trim() || "Cohent refused this tool call."}`;
  return {
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason,
      },
    }),
    exitCode: 0,
    verdict,
    injected: 0,
  };
}

function inject(event: string, text: string): Answer {
  return {
    stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } }),
    exitCode: 0,
    injected: text.length,
  };
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

interface Call {
  p: HookPayload;
  root: string | null;
  /** The session's state; null without a checkout root. */
  s: SessionFile | null;
  cwd: string;
  scriptUrl: string;
  agentId: string | null;
}

/** Applies a sub-agent transition (null: no change) now and again over what parallel hooks wrote (SessionFile.update). */
function track(s: SessionFile, next: (t: Subagents | undefined) => Subagents | undefined | null): void {
  if (next(s.state.subagents) === null) return;
  s.update((st) => {
    const t = next(st.subagents);
    if (t !== null) st.subagents = t;
  });
}

async function preToolUse({ p, root, s, cwd, scriptUrl, agentId }: Call): Promise<Answer> {
  // A publish the last prompt missed: its stale intent goes first, so that a relayed `intent` publishes a fresh one.
  const missed = s ? missedPublish(s.state) : null;
  if (missed) s!.set(missed.change);
  if (s && agentId) track(s, (t) => seen(t, agentId));
  const call = classify(p.tool_name ?? "", p.tool_input);
  if (call.kind === null) {
    if (s && isSpawn(p.tool_name, agentId)) track(s, spawned);
    return SILENT;
  }
  if (call.kind === "shell" && call.command !== null && root && s) {
    const ex = parseExemptCommand(call.command, { cwd, repoRoot: root });
    if (ex.exempt) {
      await relay(s, ex.argv, cwd, scriptUrl);
      return SILENT;
    }
  }
  const verdict = await guard(p.tool_name ?? "", call, cwd, root, s, {
    missedPublish: !!missed?.stale,
    agentId,
  });
  return verdict.permission === "deny" ? deny(verdict) : { ...SILENT, verdict };
}

async function userPromptSubmit({ p, root, s }: Call): Promise<Answer> {
  if (!root || !s) return inject("UserPromptSubmit", NOTICE.notConfigured);
  // The mark stays unless this publish binds a new intent, also when the call fails or runs out of time (saved then).
  const mark = publishMark(s.state.intentId);
  s.set({ publishing: mark, subagents: undefined });
  const input = {
    prompt: typeof p.prompt === "string" ? p.prompt : "",
    client: clientOf(p),
    model: typeof p.model === "string" ? p.model : null,
  };
  const env = await perform("publish", input, { root, sessionId: s.id, surface: "hook", session: s });
  if (publishBound(mark, s.state.intentId)) s.set({ publishing: undefined });
  if (env.ok) return inject("UserPromptSubmit", env.data.packet.text);
  const code = env.error.code;
  if (code === "NOT_CONFIGURED" || code === "NOT_PAIRED")
    return inject("UserPromptSubmit", NOTICE.notPaired(env.error.message));
  return inject("UserPromptSubmit", NOTICE.publishFailed(code, env.error.message));
}

/** The checkout for events that only report: an unusable configuration is the guard's to refuse, not theirs. */
function quietCheckout(root: string | null): client.Checkout | null {
  try {
    return root ? client.openCheckout(root) : null;
  } catch {
    return null;
  }
}

async function postToolUse({ p, root, s, cwd, agentId }: Call): Promise<Answer> {
  if (s && agentId) track(s, (t) => seen(t, agentId));
  const checkout = quietCheckout(root);
  if (!root || !s || !checkout) return SILENT;
  const call = classify(p.tool_name ?? "", p.tool_input);
  const touched: string[] = [];
  for (const t of call.kind === "edit" ? (call.targets ?? []) : []) {
    try {
      touched.push(normalizeRepoPath(resolve(cwd, t), root));
    } catch {
      /* outside the repository */
    }
  }
  if (touched.length && s.state.intentId) {
    s.set({ touched: [...new Set([...s.state.touched, ...touched])] });
    await client.checkpoint(checkout, s, { status: "working", summary: `Edited ${touched.join(", ")}` });
  }
  const pending = s.state.pending;
  if (!pending) return SILENT;
  s.set({ pending: undefined });
  await client.ack(checkout, s.id, pending.packetId, pending.text.length);
  return inject("PostToolUse", pending.text);
}

async function stop({ root, s, agentId }: Call): Promise<Answer> {
  if (!s) return SILENT;
  const input = onStop(s.state, agentId);
  if (input === "hold") track(s, (t) => (t ? held(t) : null));
  const checkout = input && input !== "hold" ? quietCheckout(root) : null;
  if (checkout && input && input !== "hold") await client.checkpoint(checkout, s, input);
  return SILENT;
}

/** A sub-agent ended; after the last one, the Stop held for them runs. */
async function subagentStop(c: Call): Promise<Answer> {
  if (!c.s?.state.subagents) return SILENT;
  const { release } = stopped(c.s.state.subagents, c.agentId);
  track(c.s, (t) => stopped(t, c.agentId).next);
  return release ? stop({ ...c, agentId: null }) : SILENT;
}

const HANDLERS: Record<string, (c: Call) => Promise<Answer>> = {
  async SessionStart({ p, s }) {
    s?.set({
      client: clientOf(p) ?? s.state.client,
      endedAt: undefined,
      ...(typeof p.model === "string" ? { model: p.model } : {}),
    });
    return SILENT;
  },
  UserPromptSubmit: userPromptSubmit,
  PreToolUse: preToolUse,
  PostToolUse: postToolUse,
  Stop: stop,
  SubagentStop: subagentStop,
  async SessionEnd({ s }) {
    s?.set({ endedAt: new Date().toISOString() });
    return SILENT;
  },
};

/** What the model reads names no absolute path of this machine (an error message may carry one). */
function scrubbed(a: Answer, root: string | null): Answer {
  return {
    ...a,
    ...(a.stdout ? { stdout: scrubPaths(a.stdout, root) } : {}),
    ...(a.stderr ? { stderr: scrubPaths(a.stderr, root) } : {}),
  };
}

/**
 * Runs one hook payload. Never throws: an internal failure on PreToolUse is
 * a deny with its reason. `watch` (deadline.ts) learns the event, and how to
 * save the session if the deadline fires first.
 */
export async function runHook(
  stdin: string,
  root: string | null,
  scriptUrl: string,
  watch?: Watch,
): Promise<HookResult> {
  let p: HookPayload;
  try {
    p = JSON.parse(stdin) as HookPayload;
    if (!p || typeof p !== "object") throw new Error("not an object");
  } catch {
    return {
      stderr: PAYLOAD_NOT_JSON,
      exitCode: 2,
      event: "unknown",
      client: null,
      model: null,
      agentId: null,
      injected: 0,
    };
  }
  const event = p.hook_event_name ?? "";
  if (watch) watch.event = event;
  const agentId = agentIdOf(p);
  const about = {
    event: event || "unknown",
    client: clientOf(p),
    model: typeof p.model === "string" ? p.model : null,
    agentId,
  };
  const sessionId = typeof p.session_id === "string" && p.session_id ? p.session_id : "unknown-session";
  let s: SessionFile | null = null;
  try {
    const handler = HANDLERS[event];
    if (!handler) return { ...about, ...SILENT };
    s = root ? new SessionFile(root, sessionId) : null;
    if (watch && s) watch.save = () => s!.save();
    const answer = await handler({
      p,
      root,
      s,
      cwd: p.cwd && isAbsolute(p.cwd) ? p.cwd : process.cwd(),
      scriptUrl,
      agentId,
    });
    s?.save();
    return { ...about, ...scrubbed(answer, root) };
  } catch (err) {
    const message = redact(err instanceof Error ? err.message : String(err));
    try {
      s?.save(); // the missed-publish mark, at least
    } catch {
      /* the failure was the save itself */
    }
    const answer: Answer =
      event === "PreToolUse"
        ? deny({ permission: "deny", condition: "unconfigured", reason: adapterFailed(message) })
        : { stderr: hookFailed(message), exitCode: 0, injected: 0 };
    return { ...about, ...scrubbed(answer, root) };
  }
}
