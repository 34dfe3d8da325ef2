import * as client from "./client.js";
import { onStop } from "./guard.js";
import { SILENT, type Answer } from "./hook-answer.js";
import type { SessionFile } from "./runtime.js";
import { held, stopped, type Subagents } from "./subagents.js";

/**
 * Stop and SubagentStop, and the sub-agent tracking they share with the
 * tool events: a Stop while sub-agents run is held until the last one ends.
 */

export interface StopCall {
  root: string | null;
  /** The session's state; null without a checkout root. */
  s: SessionFile | null;
  agentId: string | null;
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
export function quietCheckout(root: string | null): client.Checkout | null {
  try {
    return root ? client.openCheckout(root) : null;
  } catch {
    return null;
  }
}

export async function stop({ root, s, agentId }: StopCall): Promise<Answer> {
  if (!s) return SILENT;
  const input = onStop(s.state, agentId);
  if (input === "hold") track(s, (t) => (t ? held(t) : null));
  const checkout = input && input !== "hold" ? quietCheckout(root) : null;
  if (checkout && input && input !== "hold") await client.checkpoint(checkout, s, input);
  return SILENT;
}

/** A sub-agent ended; after the last one, the Stop held for them runs. */
export async function subagentStop(c: StopCall): Promise<Answer> {
  if (!c.s?.state.subagents) return SILENT;
  const { release } = stopped(c.s.state.subagents, c.agentId);
  track(c.s, (t) => stopped(t, c.agentId).next);
  return release ? stop({ ...c, agentId: null }) : SILENT;
}
