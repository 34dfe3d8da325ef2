/**
 * Claude Code sub-agents (the `Agent` tool), pure. Their tool calls reach the
 * hooks with the parent's session_id plus an agent_id, so they are the
 * parent session's work: same intent, same scope. But Claude Code fires the
 * main agent's Stop while a background sub-agent still runs (measured on
 * 2.1.197 and 2.1.332), and completing the intent then would refuse that
 * sub-agent's later writes. So the session tracks the sub-agents seen since
 * its last prompt; a Stop while any runs is held (guard.ts onStop), and the
 * intent completes when the last SubagentStop arrives or the next prompt
 * supersedes it. The hook applies these with SessionFile.update, so that
 * parallel calls of several sub-agents all count.
 */

export interface Subagents {
  /** Sub-agents whose calls were seen and that have not stopped. */
  ids: string[];
  /** Spawns allowed whose first call has not been seen yet. */
  pending: number;
  /** A Stop of the main agent arrived while these ran: run it when the last one stops. */
  stopHeld?: boolean;
}

const SPAWN_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task"]);

/** A payload's sub-agent id: set on calls a sub-agent makes, absent on the main agent's. */
export function agentIdOf(p: { agent_id?: unknown }): string | null {
  return typeof p.agent_id === "string" && p.agent_id ? p.agent_id : null;
}

/** The main agent starts a sub-agent with this tool. */
export const isSpawn = (tool: string | undefined, agentId: string | null): boolean =>
  !agentId && SPAWN_TOOLS.has(tool ?? "");

export const running = (t: Subagents | undefined): boolean => !!t && (t.ids.length > 0 || t.pending > 0);

/** A sub-agent's call: the first one seen of it turns a pending spawn into a running sub-agent. Null: nothing changes. */
export function seen(t: Subagents | undefined, id: string): Subagents | null {
  if (t?.ids.includes(id)) return null;
  return { ...t, ids: [...(t?.ids ?? []), id], pending: Math.max(0, (t?.pending ?? 0) - 1) };
}

/** An allowed spawn: pending until its first call is seen. */
export function spawned(t: Subagents | undefined): Subagents {
  return { ...t, ids: t?.ids ?? [], pending: (t?.pending ?? 0) + 1 };
}

/** The main agent's Stop while sub-agents run: held. */
export function held(t: Subagents): Subagents {
  return { ...t, stopHeld: true };
}

/**
 * SubagentStop: one fewer running (that id, else a pending spawn, else the
 * latest seen). With the last one gone the tracking ends, and `release` says
 * whether a held Stop is now due.
 */
export function stopped(
  t: Subagents | undefined,
  id: string | null,
): { next: Subagents | undefined; release: boolean } {
  if (!t) return { next: undefined, release: false };
  const ids = [...t.ids];
  let pending = t.pending;
  const i = id ? ids.indexOf(id) : -1;
  if (i !== -1) ids.splice(i, 1);
  else if (pending > 0) pending -= 1;
  else ids.pop();
  if (ids.length === 0 && pending === 0) return { next: undefined, release: !!t.stopHeld };
  return { next: { ...t, ids, pending }, release: false };
}
