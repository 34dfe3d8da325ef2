import { type SessionFile, type Checkout, checkpoint, endScope, openCheckout } from "@cohent/client";
import { onStop, stopCheckpoint } from "../guard/guard.js";
import { SILENT, type Answer } from "./hook-answer.js";
import { atSessionEnd, atStop, held, stopped, type Live, type Subagents } from "../guard/subagents.js";

/**
 * Stop, SubagentStop and SessionEnd, and the sub-agent tracking they share
 * with the tool events: a Stop while a sub-agent may still act is held until
 * none can (subagents.ts says when, and what it relies on).
 */

export interface StopCall {
  root: string | null;
  /** The session's state; null without a checkout root. */
  s: SessionFile | null;
  agentId: string | null;
  /** The payload's `background_tasks`, read (null when it has none). */
  live: Live | null;
}

/** Applies a sub-agent transition (null: no change) now and again over what parallel hooks wrote (SessionFile.update). */
export function track(
  s: SessionFile,
  next: (t: Subagents | undefined) => Subagents | undefined | null,
): void {
  if (next(s.state.subagents) === null) return;
  s.update((st) => {
    const t = next(st.subagents);
    if (t !== null) st.subagents = t;
  });
}

/** The checkout for events that only report: an unusable configuration is the guard's to refuse, not theirs. */
export function quietCheckout(root: string | null): Checkout | null {
  try {
    return root ? openCheckout(root) : null;
  } catch {
    return null;
  }
}

/** What a Stop checkpoints (completed, or blocked on a replan), sent now. */
async function finish(root: string | null, s: SessionFile): Promise<void> {
  const input = stopCheckpoint(s.state);
  const checkout = input ? quietCheckout(root) : null;
  if (checkout && input) await checkpoint(checkout, s, input);
}

export async function stop({ root, s, agentId, live }: StopCall): Promise<Answer> {
  if (!s) return SILENT;
  // The main agent's Stop lists what still runs: it replaces the tracking before the decision.
  if (!agentId && live) track(s, (t) => (t ? atStop(t, live) : null));
  const input = onStop(s.state, agentId);
  if (input === "hold") track(s, (t) => (t ? held(t) : null));
  else if (input) await finish(root, s);
  return SILENT;
}

/** A sub-agent's turn ended; once none can act any more, the Stop held for them runs. */
export async function subagentStop({ root, s, agentId, live }: StopCall): Promise<Answer> {
  if (!s?.state.subagents) return SILENT;
  const { release } = stopped(s.state.subagents, agentId, live);
  track(s, (t) => {
    const r = stopped(t, agentId, live);
    return r.next === t ? null : r.next;
  });
  if (release) await finish(root, s);
  return SILENT;
}

/**
 * SessionEnd: free the scope and leave every queue now, not at lease expiry
 * (a resumed session claims again); a Stop held for sub-agents runs first.
 * Not while a sub-agent still runs (subagents.ts atSessionEnd).
 */
export async function sessionEnd({ root, s }: StopCall): Promise<Answer> {
  if (!s) return SILENT;
  const end = atSessionEnd(s.state.subagents);
  if (end === "keep") return SILENT;
  if (end === "complete") await finish(root, s);
  const checkout = quietCheckout(root);
  if (checkout) await endScope(checkout, s).catch(() => undefined);
  s.set({
    endedAt: new Date().toISOString(),
    scope: [],
    explicitScope: false,
    queued: undefined,
    subagents: undefined,
  });
  return SILENT;
}
