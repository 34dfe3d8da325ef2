import {
  blocksEdits,
  GUIDANCE,
  INTENT_COMMAND,
  isReplan,
  type ActionName,
  type IntentEnd,
} from "@cohent/protocol/actions";
import { ERRORS, type ErrorCode } from "@cohent/protocol/codes";
import { scopeCovers } from "@cohent/protocol/paths";
import { SCOPE_COMMAND } from "@cohent/protocol/scope-commands";
import type { GuardRequest, ScopeConflict } from "@cohent/protocol";
import { contestedPaths, describeConflicts, holderWords, queueAdvice } from "./reasons.js";
import type { GuardWrite } from "./guard-file-writes.js";
import { SECTION_BEGIN, SECTION_END } from "./guard-files.js";
import type { PublishMark, SessionState } from "@cohent/client";
export type { PublishMark };
import { running, type Subagents } from "./subagents.js";
export { caughtReason, contestedPaths, describeConflicts, describeQueue, queueAdvice } from "./reasons.js";

/**
 * The guard, pure: what PreToolUse decides for one tool call over a
 * snapshot of everything it depends on, what a missed publish and a Stop
 * do. No I/O here; guard-shell.ts and hook.ts gather and save. Every text
 * the hook shows the model is here (the wrapper's line included) or, for
 * those that name a peer, in reasons.ts.
 */

export type ToolKind = "edit" | "shell";
export type TableCondition =
  "stopped" | "unreachable" | "unconfigured" | "intentNotReady" | "scopeConflict" | "outsideScope";
/**
 * A refusal's code: a row of the table, or one of the rules around it
 * (rules.ts), each with one meaning: `guardFiles` a write of the guard's own
 * files, `caughtWrite` a write caught after an earlier call, `peersUnknown`
 * the peers' claims could not be read, `gitRefused` a Git command that would
 * take a peer's changes, `staleWrite` a write over a file another session
 * changed since this one read it.
 */
export type Condition =
  TableCondition | "guardFiles" | "caughtWrite" | "peersUnknown" | "gitRefused" | "staleWrite";
export type Decision = "block" | "allow";

/**
 * The spec's PreToolUse table, as data, in the spec's order; the first row
 * whose condition holds and that blocks the tool's kind decides. Shell
 * tools are held only to the first three rows: Cohent cannot see what a
 * shell command will write, and scope is itself declared through one.
 */
export const GUARD_TABLE: readonly { condition: TableCondition; edit: Decision; shell: Decision }[] = [
  { condition: "stopped", edit: "block", shell: "block" },
  { condition: "unreachable", edit: "block", shell: "block" },
  { condition: "unconfigured", edit: "block", shell: "block" },
  { condition: "intentNotReady", edit: "block", shell: "allow" },
  { condition: "scopeConflict", edit: "block", shell: "allow" },
  { condition: "outsideScope", edit: "block", shell: "allow" },
];

/** Everything one decision depends on, gathered once. */
export interface Snapshot {
  control: "active" | "paused" | "cancelled";
  controlReason: string | null;
  /** The service's failure on this call's contact (unreachable, credential refused), if any. */
  contactError: { code: string; message: string } | null;
  /** Why the configuration is unusable (no project file, no credential), if it is. */
  configError: string | null;
  intentId: string | null;
  /** The intent on record was dropped at this call: the publish of the session's latest prompt was missed. */
  missedPublish: boolean;
  action: string | null;
  scope: string[];
  explicitScope: boolean;
  /** The edit's targets inside the repository, normalized; null when the tool's targets cannot be read. */
  targets: string[] | null;
  /** A target that is not a repository path. */
  targetError: string | null;
  /** The service's refusal of the scope this edit needed (guard-shell claims it when autoClaim asks). */
  claimError: { code: string; message: string; details?: unknown } | null;
  /** Set when a shell command's visible writes are judged as an edit's targets: the refusal then names the command. */
  shellWrite?: boolean;
  /**
   * The peers holding some of `targets`, as the service words a conflict,
   * when the guard read them (only to word a refusal: holdersWanted). A
   * refusal of a write opens with them, whatever row refused it.
   */
  holders?: ScopeConflict[];
}

export type Verdict =
  | { permission: "allow"; condition: null; reason: null }
  /** `rule`: the name of the rule that refused (rules.ts), set by the decision; the table alone (assess) leaves it out. */
  | { permission: "deny"; condition: Condition; reason: string; rule?: string };

const ALLOW: Verdict = { permission: "allow", condition: null, reason: null };
const DOCTOR_COMMAND = "node .cohent/cohent.mjs doctor";

// What the hook shows the model besides the table's rows. None names a path of the machine (hook.ts scrubs what a message may carry).

export const NO_PROJECT =
  "this checkout has no .cohent/project.json; run npx cohent init --server URL, then node .cohent/cohent.mjs bootstrap --approve";
export const MISSED_PUBLISH = `the prompt hook could not publish this prompt to Cohent (the service was unreachable or the hook failed), so the work intent on record belongs to an earlier prompt and edits are refused. Publish this prompt's intent first: ${INTENT_COMMAND}`;
export const PAYLOAD_NOT_JSON =
  "Cohent: the hook payload on stdin is not JSON; refusing. Check the hook command in .codex/hooks.json or .claude/settings.json.";
/**
 * The line the PreToolUse wrapper that init writes echoes when the adapter
 * cannot start, crashes or finds no node. It sits inside sh -c '…' and
 * echo "…", so it holds no quote, $, backtick or backslash.
 */
export const FAIL_CLOSED_REASON = `Cohent: the guard hook failed (adapter missing, crashed or no node on PATH), so this tool call is refused. Repair: npx cohent init, then ${DOCTOR_COMMAND}`;
export const deadlineReason = (ms: number) =>
  `the guard did not reach a verdict within ${Math.round(ms / 1000)} s (the Cohent service or this machine is too slow), so this tool call is refused. Try again; if it persists run ${DOCTOR_COMMAND}`;
/** An error the adapter caught: its first line only, never a stack. */
const firstLine = (message: string) => message.split("\n")[0]!.slice(0, 300);
export const adapterFailed = (message: string) =>
  `the adapter failed (${firstLine(message)}), so this tool call is refused. Run ${DOCTOR_COMMAND}.`;
export const hookFailed = (message: string) => `cohent hook: ${firstLine(message)}`;
export const NOTICE = {
  notConfigured:
    "[cohent] This checkout is not configured for Cohent (no .cohent/project.json); edits and shell commands will be refused.",
  notPaired: (message: string) => `[cohent] ${message} Until then edits and shell commands are refused.`,
  publishFailed: (code: string, message: string) =>
    `[cohent] The prompt could not be published (${code}: ${message}). Edits are refused until it is.`,
};

const isEnd = (a: string | null): a is IntentEnd => a === "completed" || a === "abandoned";
/** How a refusal of a write begins: an edit's, or a shell command's whose write targets Cohent read. */
const refused = (s: Snapshot) =>
  s.shellWrite ? `shell write refused (this command writes ${(s.targets ?? []).join(", ")})` : "edit refused";

/** Each row's condition: the reason to refuse when it holds, else null. */
const HOLDS: Record<TableCondition, (s: Snapshot) => string | null> = {
  stopped: (s) =>
    s.control === "active"
      ? null
      : `this session ${s.control === "paused" ? "is paused" : "was cancelled"} from the Cohent Control Room${s.controlReason ? ` (${s.controlReason})` : ""}. Stop working and wait for a person to resume it; no edit or shell command runs until then.`,
  unreachable: (s) => {
    const e = s.contactError;
    if (!e) return null;
    if (e.code === "CONTROL_PLANE_UNREACHABLE") return e.message;
    // The service is there but cannot vouch for this call (its database is down, it failed, it sheds load):
    // the kill switch and the peers' claims are unknown, so the call is refused, never let through.
    const known = ERRORS[e.code as ErrorCode] as { status: number } | undefined;
    if (known && (known.status >= 500 || e.code === "RATE_LIMITED"))
      return `the Cohent service cannot confirm this call right now (${e.code}: ${e.message}). Retry in a few seconds; nothing was changed.`;
    return null;
  },
  unconfigured: (s) => {
    if (s.configError) return `Cohent is not usable in this checkout: ${s.configError}`;
    const e = s.contactError;
    if (e && (e.code === "UNAUTHENTICATED" || e.code === "INVALID_SESSION")) {
      return `the Cohent service refused this machine's credential (${e.message}). Pair again: node .cohent/cohent.mjs bootstrap --approve.`;
    }
    return null;
  },
  intentNotReady: (s) => {
    if (!s.intentId && s.missedPublish) return MISSED_PUBLISH;
    if (!s.intentId)
      return `no prompt or intent has been announced for this session. Publish one first: ${INTENT_COMMAND}`;
    if (isEnd(s.action)) return `${refused(s)}: ${GUIDANCE[s.action]}`;
    return blocksEdits(s.action)
      ? `${refused(s)} (${s.action ?? "plan"}): ${GUIDANCE[(s.action ?? "plan") as ActionName]}`
      : null;
  },
  scopeConflict: (s) => {
    const e = s.claimError;
    if (!e) return null;
    if (e.code !== "SCOPE_CONFLICT")
      return `${refused(s)}: claiming ${(s.targets ?? []).join(", ")} failed: ${e.code}: ${e.message}`;
    const lines = describeConflicts(e.details);
    return `${refused(s)}: ${lines.length ? lines.join("; ") : e.message}. ${queueAdvice(claimOf(s), contestedPaths(e.details))} ${NARROWER}`;
  },
  outsideScope: (s) => {
    if (s.targetError) return `${refused(s)}: ${s.targetError}`;
    if (!s.targets || s.targets.length === 0)
      return s.explicitScope
        ? null
        : `Cohent cannot read this edit's targets. Declare them first: ${SCOPE_COMMAND} <path…>`;
    const outside = s.targets.filter((t) => !scopeCovers(s.scope, t));
    if (outside.length === 0) return null;
    return `${refused(s)}: ${outsideWords(s, outside)}`;
  },
};

const NARROWER = `Or declare a narrower scope with ${SCOPE_COMMAND} <path…>.`;
/** The scope to queue for: a scope replaces the previous claim, so the whole of it with the call's targets. */
const claimOf = (s: Snapshot) => [...new Set([...s.scope, ...(s.targets ?? [])])];
const lie = (paths: readonly string[]) => `${paths.join(", ")} ${paths.length === 1 ? "lies" : "lie"}`;
const outsideWords = (s: Snapshot, outside: readonly string[]) =>
  `${lie(outside)} outside your declared scope (${s.scope.join(", ") || "none"}), so it has not been compared with anybody else's work. Declare a scope that covers it: ${SCOPE_COMMAND} ${[...s.scope, ...outside].join(" ")}`;

/** The rows that refuse a write: where a peer holds a target, their refusal names it first (holderFirst). */
const WRITE_ROWS: ReadonlySet<Condition> = new Set<Condition>([
  "intentNotReady",
  "scopeConflict",
  "outsideScope",
]);

/** Who holds the call's targets: the service's refusal of the claim, and the peers the guard read (Snapshot.holders). */
function holdersOf(s: Snapshot): ScopeConflict[] {
  const refusal = s.claimError?.code === "SCOPE_CONFLICT" ? describedConflicts(s.claimError.details) : [];
  const named = new Set(refusal.map((c) => c.intentId));
  return [...refusal, ...(s.holders ?? []).filter((c) => !named.has(c.intentId))];
}
const describedConflicts = (details: unknown): ScopeConflict[] =>
  (details as { conflicts?: ScopeConflict[] } | undefined)?.conflicts ?? [];

/**
 * The words of a write row that refused, said after the holder: what else
 * stands in the way. Paths a peer holds are not advised to be claimed
 * (the claim would be refused); "outside your declared scope" alone is for
 * paths nobody holds.
 */
const BESIDES: Record<
  "intentNotReady" | "scopeConflict" | "outsideScope",
  (s: Snapshot, held: Set<string>) => string
> = {
  intentNotReady: (s) => {
    if (!s.intentId && s.missedPublish) return `Also, before you queue: ${MISSED_PUBLISH}`;
    if (!s.intentId)
      return `Also, before you queue: no prompt or intent has been announced for this session. Publish one first: ${INTENT_COMMAND}`;
    const action = (s.action ?? "plan") as ActionName | IntentEnd;
    return `Also, your intent is ${isEnd(action) ? "" : "on "}${action}: ${GUIDANCE[action]}`;
  },
  scopeConflict: (s) => {
    const e = s.claimError!;
    return e.code === "SCOPE_CONFLICT"
      ? NARROWER
      : `Also, claiming ${(s.targets ?? []).join(", ")} failed: ${e.code}: ${e.message}`;
  },
  outsideScope: (s, held) => {
    if (s.targetError) return `Also: ${s.targetError}`;
    const outside = (s.targets ?? []).filter((t) => !scopeCovers(s.scope, t));
    const theirs = outside.filter((t) => held.has(t));
    const free = outside.filter((t) => !held.has(t));
    return [
      theirs.length
        ? `Besides, ${lie(theirs)} outside your declared scope (${s.scope.join(", ") || "none"}): the queue command above claims ${theirs.length === 1 ? "it" : "them"} with your scope.`
        : "",
      free.length ? outsideWords(s, free) : "",
    ]
      .filter(Boolean)
      .join(" ");
  },
};

/**
 * The holder first: a write row refused the call and a peer holds some of
 * its targets, so the reason opens with who holds which, its intent and
 * what to do (work elsewhere, queue, ask), then the row's own words. Null
 * when no peer is known to hold a target: the row's reason stands alone.
 */
function holderFirst(condition: Condition, s: Snapshot): string | null {
  if (!WRITE_ROWS.has(condition)) return null;
  const holders = holdersOf(s);
  const head = holderWords(holders, claimOf(s));
  if (head === null) return null;
  const held = new Set(contestedPaths({ conflicts: holders }));
  const besides = BESIDES[condition as keyof typeof BESIDES](s, held);
  return `${refused(s)}: ${head}${besides ? ` ${besides}` : ""}`;
}

/**
 * Whether a refusal would name a holder if the guard read the peers'
 * claims: a write row refused a call with targets, and no holder is known
 * yet. The guard asks only then (one `scopes` read), so an allowed call
 * costs nothing more.
 */
export function holdersWanted(v: Verdict, s: Snapshot): boolean {
  return (
    v.permission === "deny" &&
    WRITE_ROWS.has(v.condition) &&
    !!s.targets?.length &&
    s.holders === undefined &&
    s.claimError?.code !== "SCOPE_CONFLICT"
  );
}

/**
 * A refusal on a call that also received notices: their lines go first, in
 * the reason, since a refused tool call gets no PostToolUse to inject them.
 */
export function withNotices(v: Verdict, notices: string | undefined): Verdict {
  if (v.permission !== "deny" || !notices) return v;
  return { ...v, reason: `${notices}\n\n${v.reason}` };
}

/** One row of the table for one call: its refusal's words when it holds and blocks the call's kind, else null. */
export function tableRow(condition: TableCondition, kind: ToolKind, snapshot: Snapshot): string | null {
  const row = GUARD_TABLE.find((r) => r.condition === condition)!;
  if (row[kind] !== "block") return null;
  const reason = HOLDS[condition](snapshot);
  if (reason === null) return null;
  return (holderFirst(condition, snapshot) ?? reason).trim() || "Cohent refused this tool call.";
}

/** Reads the table for one call: the first holding row that blocks its kind decides. */
export function assess(call: { kind: ToolKind }, snapshot: Snapshot, upTo?: Condition): Verdict {
  for (const row of GUARD_TABLE) {
    const reason = tableRow(row.condition, call.kind, snapshot);
    if (reason !== null) return { permission: "deny", condition: row.condition, reason };
    if (row.condition === upTo) break;
  }
  return ALLOW;
}

/**
 * The scope an edit needs claimed before the scope rows can pass: without a
 * declared scope, the guard claims each edit's targets as it goes. Null
 * when nothing is to claim, or when an earlier row already refuses.
 */
export function autoClaim(call: { kind: ToolKind }, s: Snapshot): string[] | null {
  if (call.kind !== "edit" || s.explicitScope || !s.targets?.length || s.targetError) return null;
  if (s.targets.every((t) => s.scope.includes(t))) return null;
  if (assess(call, s, "intentNotReady").permission === "deny") return null;
  return [...new Set([...s.scope, ...s.targets])];
}

/** Refusals the service cannot see, reported so that they count (it counts scope conflicts itself). */
export function reportedKind(v: Verdict, s: Snapshot): GuardRequest["kind"] | null {
  if (v.condition === "stopped") return s.control === "cancelled" ? "cancelled" : "paused";
  if (v.condition === "intentNotReady") return "intent-not-ready";
  if (v.condition === "outsideScope") return "outside-scope";
  return null;
}

const INIT_COMMANDS = "`npx cohent init` (or `node .cohent/cohent.mjs init --upgrade`)";
const GUARD_FILES_ARE =
  "what `cohent init` writes and wires: .cohent/, the clients' hook settings, the MCP entries, the managed section of AGENTS.md";
const listed = (paths: string[]) => [...new Set(paths)].join(", ");

/**
 * The refusal of a write of the guard's own files (guard-file-writes.ts).
 * It comes before every row of the table, since it depends on nothing the
 * table reads: no intent, scope or sub-agent makes such a write an agent's.
 */
export function guardFilesVerdict(writes: readonly GuardWrite[]): Verdict | null {
  if (writes.length === 0) return null;
  const whole = writes.filter((w) => w.kind === "whole").map((w) => w.path);
  const section = writes.filter((w) => w.kind === "section").map((w) => w.path);
  const lines: string[] = [];
  if (writes.some((w) => w.kind === "init"))
    lines.push(
      `this runs \`cohent init\`, which rewrites Cohent's guard files (${GUARD_FILES_ARE}) for every agent in this checkout, so a person runs it, not an agent: ${INIT_COMMANDS}. If the wiring looks broken, say so and run node .cohent/cohent.mjs doctor.`,
    );
  if (whole.length)
    lines.push(
      `${listed(whole)} ${whole.length === 1 ? "is one of" : "are"} Cohent's guard files (${GUARD_FILES_ARE}). They guard every agent in this checkout, so no agent changes them, whatever its scope; a person does, with ${INIT_COMMANDS}. Reading them is fine (cat, git diff).`,
    );
  if (section.length)
    lines.push(
      `this would change or remove the section Cohent manages in ${listed(section)} (${SECTION_BEGIN.slice(0, 17)} … to ${SECTION_END}), one of Cohent's guard files. Change the rest of the file with an edit tool (it checks that the section stays as it is) or append to it with >>; a person changes the section with ${INIT_COMMANDS}.`,
    );
  return { permission: "deny", condition: "guardFiles", reason: lines.join(" ") };
}

/** Left while UserPromptSubmit publishes; still there at the next PreToolUse, it says that publish was missed. */

export const publishMark = (intentId: string | null | undefined, now = new Date()): PublishMark => ({
  at: now.toISOString(),
  intentBefore: intentId ?? null,
});

/** After the publish: the mark goes once it bound a new intent to the session. */
export const publishBound = (mark: PublishMark, intentId: string | null | undefined): boolean =>
  !!intentId && intentId !== mark.intentBefore;

/**
 * PreToolUse finding the mark: the intent on record belongs to an earlier
 * prompt. It is dropped, so that the agent's `intent` publishes a fresh one;
 * `stale` (there was one) makes the next edit's refusal name the missed
 * publish (Snapshot.missedPublish). Null without a mark.
 */
export function missedPublish(
  s: Pick<SessionState, "publishing" | "intentId">,
): { stale: boolean; change: Partial<SessionState> } | null {
  if (!s.publishing) return null;
  return {
    stale: !!s.intentId,
    change: {
      publishing: undefined,
      intentId: undefined,
      action: undefined,
      scope: [],
      explicitScope: false,
    },
  };
}

/**
 * What a Stop does. The main agent's Stop while a sub-agent may still act
 * (running, not yet seen, or parked on a command of its own that can wake
 * it) is held: Claude Code fires it while a background sub-agent still
 * works, and 2.1.332 wakes a stopped one (measured, subagents.ts). The
 * intent stays open for their writes; the SubagentStop after which none can
 * act, or SessionEnd, runs it.
 */
export function onStop(
  s: { intentId?: string | null; action?: string | null; touched: string[]; subagents?: Subagents },
  agentId: string | null,
): "hold" | ReturnType<typeof stopCheckpoint> {
  if (!agentId && running(s.subagents)) return "hold";
  return stopCheckpoint(s);
}

/**
 * What a Stop checkpoints. An agent stopped by wait, duplicate or handoff has
 * not produced its outputs: completing it would tell dependents to proceed,
 * so it stays open as blocked until its next prompt supersedes it.
 */
export function stopCheckpoint(s: {
  intentId?: string | null;
  action?: string | null;
  touched: string[];
}): { status: "blocked" | "completed"; summary: string; paths?: string[] } | null {
  if (!s.intentId || isEnd(s.action ?? null)) return null;
  if (isReplan(s.action)) return { status: "blocked", summary: `Stopped on ${s.action}.` };
  return {
    status: "completed",
    summary: s.touched.length ? `Finished; touched ${s.touched.join(", ")}` : "Finished without edits.",
    paths: s.touched,
  };
}

/** The Git guard's answer (git-guard.ts: a command that would take a peer's changes) as a verdict; its reason names the peer, the paths and the command to use instead. */
export function gitVerdict(r: { allowed: true } | { allowed: false; reason: string }): Verdict {
  return r.allowed
    ? ALLOW
    : {
        permission: "deny",
        condition: "gitRefused",
        reason: r.reason.trim() || "git command refused: it would take a peer's changes.",
      };
}
