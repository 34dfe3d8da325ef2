/**
 * Claude Code sub-agents (the `Agent` tool), pure. Their tool calls reach the
 * hooks with the parent's session_id plus an agent_id, so they are the
 * parent session's work: same intent, same scope. The intent completes only
 * when nothing of the session can still act: a main Stop while a sub-agent
 * may still call is held (guard.ts onStop), and runs at the SubagentStop
 * after which none can, at SessionEnd, or never (the next prompt supersedes
 * the intent). The hook applies these with SessionFile.update, so that
 * parallel calls of several sub-agents all count.
 *
 * What this relies on, measured on 2.1.197 and 2.1.332 (scenarios
 * `subagent-background` and `subagent-late` in test/clients, README there):
 * - SubagentStart (not wired) comes right after the spawn's PreToolUse; the
 *   sub-agent's calls carry its agent_id, the main agent's none.
 * - The main agent's Stop comes while a background sub-agent still runs,
 *   however late its calls come (5-30 s tried). Its `background_tasks` lists
 *   the session's live background tasks: `{id, type, status}`, a sub-agent
 *   as type "subagent" with its agent_id, a background command as "shell".
 * - SubagentStop(agent_id) ends each of its turns; its `background_tasks`
 *   still lists the sub-agent itself, and any background shell.
 * - After the last one, the main agent gets a `<task-notification>` as a
 *   UserPromptSubmit (not a person's prompt) and Stops again.
 * - 2.1.332 only: a sub-agent whose turn ended while a background command
 *   it started (PostToolUse `tool_response.backgroundTaskId`) still ran is
 *   woken when the command ends, after its SubagentStop and the parent's
 *   notification turn, and calls again with the same agent_id. So a
 *   SubagentStop is final only once no shell of that sub-agent runs.
 *   2.1.197 leaves it stopped.
 * - SessionEnd comes only after every background task ended.
 * No SubagentStop of another agent was seen; one whose id is not tracked
 * changes nothing.
 */

import type { Subagents } from "@cohent/client";

export type { Subagents };

/** The live background tasks a Stop or SubagentStop payload lists (`background_tasks`). */
export interface Live {
  agents: string[];
  shells: string[];
}

const SPAWN_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task"]);
/** Statuses of a task that is over; anything else (running, pending, or a status not known yet) may still act. */
const OVER: ReadonlySet<string> = new Set(["completed", "failed", "killed", "stopped", "cancelled", "error"]);

/** A payload's sub-agent id: set on calls a sub-agent makes, absent on the main agent's. */
export function agentIdOf(p: { agent_id?: unknown }): string | null {
  return typeof p.agent_id === "string" && p.agent_id ? p.agent_id : null;
}

/** The main agent starts a sub-agent with this tool. */
export const isSpawn = (tool: string | undefined, agentId: string | null): boolean =>
  !agentId && SPAWN_TOOLS.has(tool ?? "");

/** Claude Code tells the main agent that a background task ended as a UserPromptSubmit of this form: not a person's prompt. */
export const isTaskNotification = (prompt: unknown): boolean =>
  typeof prompt === "string" && /^\s*<task-notification>/.test(prompt);

/** The background command a call started (PostToolUse `tool_response.backgroundTaskId`), if it started one. */
export function backgroundTaskOf(response: unknown): string | null {
  const id = (response as { backgroundTaskId?: unknown } | null)?.backgroundTaskId;
  return typeof id === "string" && id ? id : null;
}

/** The live sub-agents and shells of a `background_tasks` list; null when the payload has none (older clients, Codex). */
export function liveOf(tasks: unknown): Live | null {
  if (!Array.isArray(tasks)) return null;
  const live: Live = { agents: [], shells: [] };
  for (const t of tasks as { id?: unknown; type?: unknown; status?: unknown }[]) {
    if (!t || typeof t.id !== "string" || OVER.has(String(t.status))) continue;
    if (t.type === "subagent") live.agents.push(t.id);
    else if (t.type === "shell") live.shells.push(t.id);
  }
  return live;
}

export const running = (t: Subagents | undefined): boolean =>
  !!t && (t.ids.length > 0 || t.pending > 0 || (t.parked?.length ?? 0) > 0);

const without = (xs: readonly string[], x: string | null) => xs.filter((y) => y !== x);
const uniq = (xs: readonly string[]) => [...new Set(xs)];

/** The same tracking with empty parts left out; undefined once nothing is tracked and no Stop is held. */
function tidy(t: Subagents): Subagents | undefined {
  const shells = Object.fromEntries(Object.entries(t.shells ?? {}).filter(([, v]) => v.length > 0));
  const out: Subagents = { ids: t.ids, pending: t.pending };
  if (Object.keys(shells).length) out.shells = shells;
  if (t.parked?.length) out.parked = t.parked;
  if (t.stopHeld) out.stopHeld = true;
  return running(out) || out.shells || out.stopHeld ? out : undefined;
}

/** Whether a shell this sub-agent started is among the live ones. */
const hasLiveShell = (t: Subagents, id: string, live: Live) =>
  (t.shells?.[id] ?? []).some((s) => live.shells.includes(s));

/** A sub-agent's call: the first one seen of it turns a pending spawn into a running sub-agent; a woken one runs again. Null: nothing changes. */
export function seen(t: Subagents | undefined, id: string): Subagents | null {
  if (t?.ids.includes(id)) return null;
  if (t?.parked?.includes(id)) return tidy({ ...t, ids: [...t.ids, id], parked: without(t.parked, id) })!;
  return { ...t, ids: [...(t?.ids ?? []), id], pending: Math.max(0, (t?.pending ?? 0) - 1) };
}

/** An allowed spawn: pending until its first call is seen. */
export function spawned(t: Subagents | undefined): Subagents {
  return { ...t, ids: t?.ids ?? [], pending: (t?.pending ?? 0) + 1 };
}

/** A sub-agent started a background command. Null: nothing changes. */
export function shellStarted(t: Subagents | undefined, id: string, task: string): Subagents | null {
  const mine = t?.shells?.[id] ?? [];
  if (mine.includes(task)) return null;
  return {
    ...t,
    ids: t?.ids ?? [],
    pending: t?.pending ?? 0,
    shells: { ...t?.shells, [id]: [...mine, task] },
  };
}

/**
 * The main agent's Stop: what runs is exactly what its `background_tasks`
 * lists (a foreground sub-agent cannot be running then), so the list replaces
 * the count of spawns and the ids, and a parked sub-agent stays only while a
 * command of its own runs. Without a list, the tracking stands.
 */
export function atStop(t: Subagents | undefined, live: Live | null): Subagents | undefined {
  if (!t || !live) return t;
  const shells = Object.fromEntries(
    Object.entries(t.shells ?? {}).map(([a, v]) => [a, v.filter((s) => live.shells.includes(s))]),
  );
  const next = { ...t, ids: uniq(live.agents), pending: 0, shells };
  return tidy({ ...next, parked: (t.parked ?? []).filter((a) => hasLiveShell(t, a, live)) });
}

/** The main agent's Stop while sub-agents may still act: held. */
export function held(t: Subagents): Subagents {
  return { ...t, stopHeld: true };
}

/** The main agent starts a turn of its own (a task notification): a Stop held for the turn before is its Stop's to decide again. */
export function turnStarted(t: Subagents | undefined): Subagents | undefined | null {
  if (!t?.stopHeld) return null;
  return tidy({ ...t, stopHeld: false });
}

/**
 * SubagentStop of `id`: a tracked sub-agent stops, or parks while a command
 * it started still runs (2.1.332 wakes it then). An id not tracked changes
 * nothing: it must not release a Stop held for another. Sub-agents its
 * `background_tasks` lists as live are added, never taken away (the list is
 * trusted to replace the tracking only at the main agent's Stop). With none
 * left that can act, the tracking ends and `release` says whether a held
 * Stop is now due.
 */
export function stopped(
  t: Subagents | undefined,
  id: string | null,
  live: Live | null = null,
): { next: Subagents | undefined; release: boolean } {
  if (!t || !id || !(t.ids.includes(id) || t.parked?.includes(id))) return { next: t, release: false };
  const parks = !!live && hasLiveShell(t, id, live);
  const ids = uniq([...without(t.ids, id), ...without(live?.agents ?? [], id)]);
  const parked = uniq([...without(t.parked ?? [], id), ...(parks ? [id] : [])]);
  const next = tidy({ ...t, ids, parked });
  if (running(next)) return { next, release: false };
  return { next: undefined, release: !!t.stopHeld };
}

/**
 * SessionEnd. `keep`: a sub-agent was seen and has not stopped (never
 * measured: both clients end a session after its background tasks), so its
 * writes keep their scope and its SubagentStop completes the work.
 * Otherwise nothing of the session can act any more (a parked sub-agent
 * ends with the process): a held Stop runs now (`complete`), then the scope
 * is freed (`end`).
 */
export function atSessionEnd(t: Subagents | undefined): "keep" | "complete" | "end" {
  if (t?.ids.length) return "keep";
  return t?.stopHeld ? "complete" : "end";
}
