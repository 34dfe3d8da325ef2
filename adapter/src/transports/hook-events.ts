import { resolve } from "node:path";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import { perform, type SessionFile, ack, checkpoint as serverCheckpoint } from "@cohent/client";
import { NOTICE, publishBound, publishMark } from "../guard/guard.js";
import { backgroundTaskOf, isTaskNotification, seen, shellStarted, turnStarted } from "../guard/subagents.js";
import { classify } from "../guard/tools.js";
import { recordAfterCall } from "../guard/read-after.js";
import type { Call, HookPart } from "./hook.js";
import { inject, SILENT, type Answer } from "./hook-answer.js";
import { preToolUseWith } from "./hook-pre-tool.js";
import { quietCheckout, sessionEnd, stop, subagentStop, track } from "./hook-stop.js";
import { relay } from "./relay.js";
import { caughtAfter } from "./hook-caught.js";

/**
 * The hook's handlers in the whole adapter, by event: the prompt's publish,
 * the checkpoint after an edit, the session's start, stops and end, and
 * PreToolUse with the relay of the adapter's own commands.
 */

async function userPromptSubmit({ p, root, s, client: clientName }: Call): Promise<Answer> {
  if (!root || !s) return inject(NOTICE.notConfigured);
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
    client: clientName,
    model: typeof p.model === "string" ? p.model : null,
  };
  const env = await perform("publish", input, { root, sessionId: s.id, surface: "hook", session: s });
  if (publishBound(mark, s.state.intentId)) s.set({ publishing: undefined });
  if (env.ok) return inject(env.data.packet.text);
  const code = env.error.code;
  if (code === "NOT_CONFIGURED" || code === "NOT_PAIRED") return inject(NOTICE.notPaired(env.error.message));
  return inject(NOTICE.publishFailed(code, env.error.message));
}

async function postToolUse({ p, root, s, cwd, agentId, dialect }: Call): Promise<Answer> {
  if (s && agentId) track(s, (t) => seen(t, agentId));
  // A background command a sub-agent started can wake it after its SubagentStop (2.1.332).
  const task = agentId ? backgroundTaskOf(p.tool_response) : null;
  if (s && agentId && task) track(s, (t) => shellStarted(t, agentId, task));
  // What the session now read or wrote, by content, before anything can answer: the stale-write check's record (read-after.ts).
  if (root && s) recordAfterCall(root, s, p.tool_name ?? "", p.tool_input, cwd);
  // The check after the call first: a write caught under a peer's claim is what the model must hear now.
  const caught = root && s ? await caughtAfter(root, s, p, dialect) : null;
  if (caught) return { exitCode: 0, stdout: caught.stdout, injected: caught.chars };
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
    await serverCheckpoint(checkout, s, { status: "working", summary: `Edited ${touched.join(", ")}` });
  }
  const pending = s.state.pending;
  // A host that reads no context here (Copilot, Cursor, OpenCode) leaves the packet for a refusal to carry.
  if (!pending || dialect.context("PostToolUse", pending.text) === undefined) return SILENT;
  s.set({ pending: undefined });
  await ack(checkout, s.id, pending.packetId, pending.text.length);
  return inject(pending.text);
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
    const { readWiring, reportState } = await import("../installer/wiring-check.js");
    await reportState(root, quietCheckout(root), s.id, event, readWiring(root, s.runtime), s.runtime);
  } catch {
    /* never in a session start's way */
  }
}

/** The whole adapter's handlers: every event the hook acts on. */
export const WHOLE: HookPart = {
  handlers: {
    async SessionStart({ p, root, s, client: clientName }) {
      s?.set({
        client: clientName ?? s.state.client,
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
    PreToolUse: preToolUseWith(async (s, argv, cwd, scriptUrl) => {
      await relay(s, argv, cwd, scriptUrl);
      return SILENT;
    }),
    PostToolUse: postToolUse,
    Stop: stop,
    SubagentStop: subagentStop,
    SessionEnd: sessionEnd,
  },
};
