import { isAbsolute, resolve } from "node:path";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import * as client from "./client.js";
import { notExemptNote, parseExemptCommand } from "./exemption.js";
import type { Watch } from "./deadline.js";
import {
  adapterFailed,
  hookFailed,
  missedPublish,
  NOTICE,
  PAYLOAD_NOT_JSON,
  publishBound,
  publishMark,
} from "./guard.js";
import { guard, guardFilesCheck } from "./guard-shell.js";
import { deny, inject, scrubbed, SILENT, type Answer } from "./hook-answer.js";
import { quietCheckout, sessionEnd, stop, subagentStop, track, type StopCall } from "./hook-stop.js";
import { perform } from "./operations.js";
import { redact } from "./redact.js";
import { relay } from "./relay.js";
import { SessionFile } from "./runtime.js";
import {
  agentIdOf,
  backgroundTaskOf,
  isSpawn,
  isTaskNotification,
  liveOf,
  seen,
  shellStarted,
  spawned,
  turnStarted,
} from "./subagents.js";
import { classify, clientOf, type HookPayload } from "./tools.js";

/**
 * `hook`: one Codex or Claude Code hook payload on stdin, one answer on
 * stdout. A transport: it parses the payload, calls the guard or the
 * operation layer, and renders. A deny is always the JSON
 * hookSpecificOutput form with a non-empty reason (both clients fail open
 * on anything less). runtime.json is read once per call and written at
 * most once (SessionFile), also when the call fails or runs out of time:
 * the missed-publish mark and the sub-agent tracking ride on that one write.
 */

/** The answer, and what it did, so that the caller never re-reads its own output. */
export interface HookResult extends Answer {
  event: string;
  client: string | null;
  model: string | null;
  /** The sub-agent that made the call, if one did. */
  agentId: string | null;
}

interface Call extends StopCall {
  p: HookPayload;
  cwd: string;
  scriptUrl: string;
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
  // The guard's own files first: no exemption, intent or scope makes their write an agent's.
  const guardFiles = guardFilesCheck(p.tool_name ?? "", p.tool_input, call, cwd, root);
  if (guardFiles?.permission === "deny") return deny(guardFiles);
  // The adapter's own command but for a prefix that is not inert: an ordinary shell command, and its deny says why.
  let notExempt: string | null = null;
  if (call.kind === "shell" && call.command !== null && root && s) {
    const ex = parseExemptCommand(call.command, { cwd, repoRoot: root, sessionId: s.id });
    if (ex.exempt) {
      await relay(s, ex.argv, cwd, scriptUrl);
      return SILENT;
    }
    if (ex.prefix) notExempt = ex.why;
  }
  const verdict = await guard(p.tool_name ?? "", call, cwd, root, s, {
    missedPublish: !!missed?.stale,
    agentId,
  });
  if (verdict.permission !== "deny") return { ...SILENT, verdict };
  return deny(notExempt ? { ...verdict, reason: `${verdict.reason} ${notExemptNote(notExempt)}` } : verdict);
}

async function userPromptSubmit({ p, root, s }: Call): Promise<Answer> {
  if (!root || !s) return inject("UserPromptSubmit", NOTICE.notConfigured);
  // Claude Code's word that a background task ended starts a turn of the same work, not a new prompt:
  // publishing it would supersede the intent under a sub-agent that still works (measured, subagents.ts).
  if (isTaskNotification(p.prompt)) {
    track(s, turnStarted);
    return SILENT;
  }
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

async function postToolUse({ p, root, s, cwd, agentId }: Call): Promise<Answer> {
  if (s && agentId) track(s, (t) => seen(t, agentId));
  // A background command a sub-agent started can wake it after its SubagentStop (2.1.332).
  const task = agentId ? backgroundTaskOf(p.tool_response) : null;
  if (s && agentId && task) track(s, (t) => shellStarted(t, agentId, task));
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

/**
 * The guard wiring's check (wiring-check.ts), once a session: at its start,
 * or at its first prompt when no SessionStart ran (that hook entry removed,
 * or not trusted by Codex). A modified wiring is reported to the service;
 * the session goes on whatever it finds, and a failure is nobody's business.
 */
async function checkWiring(root: string | null, s: SessionFile | null, event: string): Promise<void> {
  if (!root || !s || s.state.wiringChecked) return;
  s.set({ wiringChecked: true });
  try {
    const { readWiring, reportState } = await import("./wiring-check.js");
    await reportState(root, quietCheckout(root), s.id, event, readWiring(root, s.runtime), s.runtime);
  } catch {
    /* never in a session start's way */
  }
}

const HANDLERS: Record<string, (c: Call) => Promise<Answer>> = {
  async SessionStart({ p, root, s }) {
    s?.set({
      client: clientOf(p) ?? s.state.client,
      endedAt: undefined,
      ...(typeof p.model === "string" ? { model: p.model } : {}),
      // A resumed or cleared session starts again: its wiring is checked again.
      wiringChecked: undefined,
    });
    await checkWiring(root, s, "SessionStart");
    return SILENT;
  },
  async UserPromptSubmit(c) {
    const answer = await userPromptSubmit(c);
    await checkWiring(c.root, c.s, "UserPromptSubmit");
    return answer;
  },
  PreToolUse: preToolUse,
  PostToolUse: postToolUse,
  Stop: stop,
  SubagentStop: subagentStop,
  SessionEnd: sessionEnd,
};

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
      live: liveOf(p.background_tasks),
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
