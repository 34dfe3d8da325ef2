import { caughtReason } from "../guard/guard.js";
import { closeCall, endCall, reportCaught } from "../guard/held-call.js";
import type { HookPayload } from "../guard/tools.js";
import type { Dialect } from "../hosts/dialect.js";
import type { SessionFile } from "@cohent/client/state/runtime.js";
import { quietCheckout } from "./hook-stop.js";

/**
 * The check after a call (held-call.ts) as the hook runs it: at PostToolUse,
 * and at the next PreToolUse for a call its host closed without one. A
 * caught write is reported, and told to the model in the host's own way: a
 * PostToolUse block where the host has one, its context where it reads
 * one, else the refusal of the session's next edit or shell call (a read
 * is answered by the loader without the session, so it passes meanwhile).
 */

/** The client's id of a tool call, which its PostToolUse names again (Claude Code's and Codex's tool_use_id). */
export const callKeyOf = (p: HookPayload): string | null =>
  typeof p.tool_use_id === "string" && p.tool_use_id ? p.tool_use_id.slice(0, 200) : null;

/**
 * At PreToolUse, before anything else: a caught write the model has not been
 * told of yet, or one under a call its host left without a PostToolUse.
 * Returns the refusal's reason, told once.
 */
export async function caughtBefore(root: string, s: SessionFile): Promise<string | null> {
  const untold = s.state.caught;
  if (untold) {
    s.set({ caught: undefined });
    return untold;
  }
  const c = closeCall(root, s, null);
  if (!c) return null;
  await reportCaught(quietCheckout(root), s, c);
  return caughtReason(c);
}

/** At PostToolUse: the hook's stdout telling the model of a caught write, when there was one and the host reads it here. */
export async function caughtAfter(
  root: string,
  s: SessionFile,
  p: HookPayload,
  dialect: Dialect,
): Promise<{ stdout: string; chars: number } | null> {
  const c = closeCall(root, s, callKeyOf(p));
  endCall(root, s);
  if (!c) return null;
  await reportCaught(quietCheckout(root), s, c);
  const reason = caughtReason(c);
  const told = `Cohent: ${reason}`;
  const stdout = dialect.caught?.(told) ?? dialect.context("PostToolUse", told);
  if (stdout === undefined) {
    s.set({ caught: reason });
    return null;
  }
  return { stdout, chars: told.length };
}
