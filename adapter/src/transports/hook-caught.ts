import { RESTORE_COMMAND, shellWord } from "@cohent/protocol/scope-commands";
import { SessionFile, reportGuardFiles } from "@cohent/client";
import { caughtReason } from "../guard/guard.js";
import { closeCalls, endCall, lookBetween, reportCaught, type Caught } from "../held/call.js";
import type { HookPayload } from "../guard/tools.js";
import type { Dialect } from "../hosts/dialect.js";
import { quietCheckout } from "./hook-stop.js";

/**
 * The watch (held/call.ts) as the hook runs it: at PostToolUse, and at the
 * next PreToolUse for every call its host closed without one, then the
 * comparison with the checkout's last known state. A caught write is
 * reported, and told to the model in the host's own way: a PostToolUse
 * block where the host has one, its context where it reads one, else the
 * refusal of the session's next edit or shell call. A change noticed
 * between calls is told to the holder and the Control Room; this session's
 * model hears of it only when the journal names this session its writer.
 */

/** The client's id of a tool call, which its PostToolUse names again (Claude Code's and Codex's tool_use_id). */
export const callKeyOf = (p: HookPayload): string | null =>
  typeof p.tool_use_id === "string" && p.tool_use_id ? p.tool_use_id.slice(0, 200) : null;

const listed = (paths: readonly string[]) =>
  paths.slice(0, 20).join(", ") + (paths.length > 20 ? ` and ${paths.length - 20} more` : "");

/**
 * What this session's model hears of one catch: `refuse`, what its own call
 * (or a job it left running) did, which it must undo; `inform`, a change
 * noticed between calls under this session's own claim, which it should
 * know of. Nothing when the catch is neither.
 */
export function toldText(
  c: Caught,
  sessionId: string,
  intentId: string | null,
): { refuse: string | null; inform: string | null } {
  const parts: string[] = [];
  const mine = !c.between || c.between.writer === sessionId;
  if (c.undone.length && mine) {
    const back = c.undone.filter((u) => u.undone).map((u) => u.path);
    const not = c.undone.filter((u) => !u.undone).map((u) => u.path);
    parts.push(
      `this call changed Cohent's guard files (${listed(c.undone.map((u) => `${u.path} ${u.change}`))}), which decide whether every agent's tool calls are checked.` +
        (back.length ? ` Put back as they were: ${listed(back)}.` : "") +
        (not.length ? ` Could not be put back: ${listed(not)}; a person must look at them.` : "") +
        " This session is paused until a person resumes it in the Control Room; do not change these files.",
    );
  }
  if (c.changes.length && mine)
    parts.push(
      c.between
        ? `a background process this session started changed ${listed(c.changes.map((x) => x.path))} after its call ended. ${caughtReason(c)}`
        : caughtReason(c),
    );
  let inform: string | null = null;
  if (c.between && !mine && intentId) {
    // The holder's own adapter noticed: its model hears that its files changed under it.
    const own = c.peers.filter((x) => x.peer.intentId === intentId).flatMap((x) => x.paths);
    if (own.length) inform = `${listed(own)}, which you hold, ${betweenNote(c)}.`;
  }
  return { refuse: parts.length ? parts.join(" ") : null, inform };
}

/** The line a person (and the holder) reads of a change noticed between calls. */
export function betweenNote(c: Caught): string {
  const who = c.between?.writer ? `session ${c.between.writer}` : "unknown";
  const restorable = c.changes.filter((x) => x.restorable).map((x) => shellWord(x.path));
  return `changed between tool calls (writer: ${who}); ${restorable.length ? `${RESTORE_COMMAND} ${restorable.join(" ")} puts back the bytes from before` : "the bytes from before were not kept"}`;
}

/** Reports every catch (the holder and the Control Room) and answers what this session's model is told. */
async function tell(
  root: string,
  s: SessionFile,
  caught: Caught[],
): Promise<{ refuse: string | null; inform: string | null }> {
  if (caught.length === 0) return { refuse: null, inform: null };
  const checkout = quietCheckout(root);
  const refuse: string[] = [];
  const inform: string[] = [];
  for (const c of caught) {
    await reportCaught(checkout, s, c);
    // A call of this session's that changed the guard's files pauses it (told before the next call reads the switch).
    if (checkout && c.undone.length && (!c.between || c.between.writer === s.id))
      await reportGuardFiles(checkout, s, {
        tool: c.tool,
        command: c.command,
        files: c.undone.map((u) => ({ path: u.path, change: u.change })),
        undone: c.undone.every((u) => u.undone),
      }).catch(() => undefined);
    const t = toldText(c, s.id, s.state.intentId ?? null);
    if (t.refuse) refuse.push(t.refuse);
    if (t.inform) inform.push(t.inform);
  }
  return { refuse: refuse.length ? refuse.join(" ") : null, inform: inform.length ? inform.join(" ") : null };
}

/**
 * At PreToolUse, before anything else: a caught write the model has not been
 * told of yet, or one under a call its host left without a PostToolUse, or
 * a change since the checkout's last known state. Returns the refusal's
 * reason, told once. A change under this session's own claim that another
 * made is no reason to refuse: the model hears of it after the call.
 */
export async function caughtBefore(root: string, s: SessionFile): Promise<string | null> {
  const untold = s.state.caught;
  if (untold) {
    s.set({ caught: undefined });
    return untold;
  }
  const t = await tell(root, s, await closeCalls(root, s, undefined));
  if (t.inform) s.set({ heard: t.inform });
  return t.refuse;
}

/**
 * A look between calls from a long-lived guard (hook-in-process.ts): a
 * change is reported when it happens; what this session's model must hear
 * waits in its state for its next call (refused with it, or told after it).
 */
export async function lookNow(root: string, sessionId: string): Promise<void> {
  const s = new SessionFile(root, sessionId);
  const c = await lookBetween(root, s);
  if (!c) return;
  const t = await tell(root, s, [c]);
  if (!t.refuse && !t.inform) return;
  if (t.refuse) s.set({ caught: [s.state.caught, t.refuse].filter(Boolean).join(" ") });
  if (t.inform) s.set({ heard: [s.state.heard, t.inform].filter(Boolean).join(" ") });
  s.save();
}

/** At PostToolUse: the hook's stdout telling the model of a caught write, or of a change under its own claim, where the host reads it here. */
export async function caughtAfter(
  root: string,
  s: SessionFile,
  p: HookPayload,
  dialect: Dialect,
): Promise<{ stdout: string; chars: number } | null> {
  const caught = await closeCalls(root, s, callKeyOf(p));
  endCall(root, s);
  const t = await tell(root, s, caught);
  const heard = [s.state.heard, t.inform].filter(Boolean).join(" ");
  if (s.state.heard) s.set({ heard: undefined });
  if (t.refuse) {
    const told = `Cohent: ${t.refuse}${heard ? ` Also: ${heard}` : ""}`;
    const stdout = dialect.caught?.(told) ?? dialect.context("PostToolUse", told);
    if (stdout !== undefined) return { stdout, chars: told.length };
    s.set({ caught: t.refuse });
    return null;
  }
  if (!heard) return null;
  const told = `Cohent: ${heard}`;
  const stdout = dialect.context("PostToolUse", told);
  return stdout === undefined ? null : { stdout, chars: told.length };
}
