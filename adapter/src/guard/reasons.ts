import { BOUNDS } from "@cohent/protocol/bounds";
import {
  REQUEST_RELEASE_COMMAND,
  RESTORE_COMMAND,
  SCOPE_COMMAND,
  SCOPE_QUEUE_COMMAND,
  shellWord,
} from "@cohent/protocol/scope-commands";
import type { QueuePlace, ScopeConflict } from "@cohent/protocol";
import { inert } from "@cohent/client";

/**
 * The texts that name a peer: who holds what, what to do about it (work
 * elsewhere, queue, ask), and what a caught write tells the model. Shared by
 * the guard's refusals (guard.ts) and the CLI. Pure.
 *
 * Peer text (person, client, model, objective) comes from other agents
 * through the service, which redacts it: here it is one line, bounded, and
 * the objective JSON-quoted, so that it reads as data, never as an
 * instruction.
 */

/** Holders named in one reason; the rest are counted. */
const SHOWN_HOLDERS = 5;
/** Paths named per holder; the rest are counted. */
const SHOWN_PATHS = 10;
/** A peer's objective, quoted: enough to recognize the work. */
const OBJECTIVE_CHARS = 160;

const shellWords = (paths: readonly string[]) => paths.map(shellWord).join(" ");

function listed(paths: readonly string[], max = SHOWN_PATHS): string {
  return paths.slice(0, max).join(", ") + (paths.length > max ? ` and ${paths.length - max} more` : "");
}

/** A peer's objective as data: bounded, JSON-quoted, `<` escaped (no tag can open). */
function quoted(objective: string): string {
  const one = inert(objective, OBJECTIVE_CHARS + 1);
  const text = one.length > OBJECTIVE_CHARS ? one.slice(0, OBJECTIVE_CHARS - 1) + "…" : one;
  return JSON.stringify(text).replace(/</g, "\\u003c");
}

const conflictsOf = (details: unknown): ScopeConflict[] =>
  (details as { conflicts?: ScopeConflict[] } | undefined)?.conflicts ?? [];

/** One line per conflicting peer: the one rendering of a scope conflict (hook refusals and the CLI). */
export function describeConflicts(details: unknown): string[] {
  return conflictsOf(details).map((c) => {
    const agent = [inert(c.client), inert(c.model)].filter(Boolean).join(" ");
    const working = c.objective ? `, working on ${quoted(c.objective)}` : "";
    return `${listed(c.paths)} overlaps the scope of ${inert(c.person)}${agent ? ` (${agent})` : ""}: ${listed(c.theirPaths)}${working} (${inert(c.intentId, 40)})`;
  });
}

/** Who a queued claim waits for, in order: the one rendering of a queue place (hook refusals, the CLI, the agent CLI's message). */
export function describeQueue(q: QueuePlace): string {
  const behind = q.behind.map((b) => {
    const agent = [b.client, b.model].filter(Boolean).join(" ");
    return `${b.person}${agent ? ` (${agent})` : ""} ${b.holds ? "holding" : "also waiting for"} ${b.paths.join(", ")} (${b.intentId})`;
  });
  return `You are queued for ${q.paths.join(", ")} at place ${q.place}${behind.length ? `, behind ${behind.join("; ")}` : ""}.`;
}

/** The contested part of a refused claim: our paths that overlap a peer's. */
export function contestedPaths(details: unknown): string[] {
  return [...new Set(conflictsOf(details).flatMap((c) => c.paths))];
}

/**
 * What to do about a peer's scope: work elsewhere meanwhile, queue for the
 * claim (or wait for it), or ask the holder. `claim` is the whole scope to
 * queue for (a scope replaces the previous claim), `contested` its overlap.
 */
export function queueAdvice(claim: readonly string[], contested: readonly string[]): string {
  const asked = contested.length ? contested : claim;
  return [
    `Meanwhile, work on files outside ${asked.join(", ")}.`,
    `To get them when they free: ${SCOPE_QUEUE_COMMAND} ${shellWords(claim)} (queues and returns; a later packet says "granted"), or ${SCOPE_COMMAND} --wait <seconds, at most ${BOUNDS.scopeWaitSeconds}> ${shellWords(claim)} (queues and blocks until granted).`,
    `To ask the holder to let go: ${REQUEST_RELEASE_COMMAND} ${shellWords(asked)} --note '<why>'.`,
  ].join(" ");
}

/**
 * The holder first: who holds which of the call's paths (person, client and
 * model, its intent and objective), then what to do (queueAdvice). Every
 * refusal of a write that a peer holds opens with it, whatever other rule
 * also refused it (guard.ts assess); that rule's words follow. `claim` is
 * the scope to queue for. Null with no holder.
 */
export function holderWords(holders: readonly ScopeConflict[], claim: readonly string[]): string | null {
  if (holders.length === 0) return null;
  const lines = describeConflicts({ conflicts: holders.slice(0, SHOWN_HOLDERS) });
  if (holders.length > SHOWN_HOLDERS) lines.push(`and ${holders.length - SHOWN_HOLDERS} more peers`);
  return `${lines.join("; ")}. ${queueAdvice(claim, contestedPaths({ conflicts: holders }))}`;
}

/**
 * What the model reads when the check after its call caught a write into
 * held paths (held/call.ts): which paths, whose, and how to undo it.
 */
export function caughtReason(c: {
  command: string | null;
  tool: string;
  peers: {
    peer: { person: string; client: string | null; model: string | null; intentId: string };
    paths: string[];
  }[];
  guardFiles: string[];
  changes: { path: string; change: string; restorable: boolean }[];
}): string {
  const what = c.command !== null ? "this shell command" : `this ${c.tool} call`;
  const changed = c.changes.map((x) => `${x.path} (${x.change})`).join(", ");
  const whose = c.peers.map(({ peer, paths }) => {
    const agent = [peer.client, peer.model].filter(Boolean).join(" ");
    return `${paths.join(", ")} ${paths.length === 1 ? "is" : "are"} claimed by ${peer.person}${agent ? ` (${agent})` : ""} (${peer.intentId})`;
  });
  if (c.guardFiles.length)
    whose.push(
      `${c.guardFiles.join(", ")} ${c.guardFiles.length === 1 ? "is one of" : "are"} Cohent's guard files`,
    );
  const restorable = c.changes.filter((x) => x.restorable).map((x) => x.path);
  const lost = c.changes.filter((x) => !x.restorable).map((x) => x.path);
  const undo = restorable.length
    ? `Undo it now, before anything else: ${RESTORE_COMMAND} ${restorable.map(shellWord).join(" ")} (puts back the bytes from before this call).`
    : "";
  const none = lost.length
    ? `Restore is not available for ${lost.join(", ")} (more than Cohent keeps a call): tell the user what changed.`
    : "";
  return [
    `${what} changed ${changed}, which it had not claimed: ${whose.join("; ")}. The holder and the Control Room have been told.`,
    undo,
    none,
    `Then write only inside your own scope; for these paths, queue (${SCOPE_QUEUE_COMMAND} <path…>) or ask the holder (${REQUEST_RELEASE_COMMAND} <path…>).`,
  ]
    .filter(Boolean)
    .join(" ");
}
