import type { ScopeConflict } from "@cohent/protocol";
import { SCOPE_COMMAND, SCOPE_QUEUE_COMMAND, RESTORE_COMMAND } from "@cohent/protocol/scope-commands";
import { INTENT_COMMAND } from "@cohent/protocol/actions";
import {
  assess,
  GUARD_TABLE,
  guardFilesVerdict,
  holdersWanted,
  tableRow,
  type Condition,
  type Snapshot,
  type TableCondition,
  type ToolKind,
  type Verdict,
} from "./guard.js";
import type { GuardWrite } from "./guard-file-writes.js";
import { peerConflicts, type ShellHold } from "../shell/hold.js";
import { staleReason, type StaleWrite } from "./stale-write.js";
import type { ToolCall } from "./tools.js";
import type { PeerScope } from "../git/git-guard.js";
import { inert } from "@cohent/client";

/**
 * The guard's one decision, pure: an ordered list of named rules, kept as
 * data, walked over one value of facts (guard-shell.ts gathers it, act.ts does
 * what the verdict needs). The first rule that fires decides; its name
 * travels with the verdict (the reason's code, the usage ledger, `why`).
 * The specification's PreToolUse table is one block of the list
 * (GUARD_TABLE, in its order).
 *
 * Facts come in stages, cheapest first, so that a call refused early costs
 * no contact with the service and an allowed one no more than it needs:
 * decide() asks for the stage a rule reads before it reads it ({ need }),
 * and a rule's costly facts only when it can still fire on what is known.
 */

/** The stages of facts, in the order guard-shell.ts gathers them. */
export type Stage = "call" | "caught" | "service" | "peers" | "git" | "stale";

/** What the service stage found: the session's state as one snapshot, and what the call writes. */
export interface ServiceFacts {
  /** "edit" for a call with write targets (an edit tool, a patch, a shell command's named writes). */
  kind: ToolKind;
  snap: Snapshot;
  /** The guard claimed the targets on this call (Snapshot.claimError has the service's refusal). */
  claimed: boolean;
  /** A shell command's writes as held (shell/hold.ts): the shell reader, run once. */
  hold: ShellHold | null;
  /** A configured checkout with a session: the peers, Git and the stale check can be read. */
  bound: boolean;
}

/** The Git guard's answer for a command that stages, commits, stashes or discards (git-guard.ts). */
export type GitFacts = { allowed: true } | { allowed: false; reason: string; paths: string[] };

/** One value of everything a decision reads; each stage's fields are there once guard-shell.ts gathered it. */
export interface Facts {
  tool: string;
  /** The host's name, for the refusal of a tool it does not know. */
  label: string;
  /** A tool of a known host that no table of its dialect knows. */
  unknownTool: string | null;
  // "call": the tool call itself, read without I/O but the guard files' realpaths.
  call?: ToolCall;
  /** The guard's own files the call writes (guard-file-writes.ts). */
  guardWrites?: readonly GuardWrite[];
  /** The adapter's own command (exemption.ts): relayed, never refused but for the guard files. */
  exempt?: boolean;
  /** The adapter's own command but for a prefix that is not inert: why, added to a refusal. */
  notExempt?: string | null;
  // "caught": a write caught after an earlier call, told with this one (hook-caught.ts).
  caught?: string | null;
  service?: ServiceFacts;
  /** The active peers' claims, or why they could not be read. */
  peers?: PeerScope[] | { error: string };
  git?: GitFacts;
  /** What this session writes over since it last read it (stale-write.ts). */
  stale?: StaleWrite[];
}

export type RuleName =
  | "unknown-tool"
  | "guard-files"
  | "exempt"
  | "caught-write"
  | "not-guarded"
  | "stopped"
  | "unreachable"
  | "unconfigured"
  | "intent-not-ready"
  | "scope-conflict"
  | "outside-scope"
  | "peers-unknown"
  | "peer-holds"
  | "uncertain-write-held"
  | "git-refused"
  | "stale-write"
  | "allow";

/** The facts a refusal shows (`why`), by name; each rule lists those it reads. */
export type FactName =
  | "tool"
  | "command"
  | "targets"
  | "guard-files"
  | "caught"
  | "control"
  | "contact"
  | "config"
  | "intent"
  | "scope"
  | "claim"
  | "peers"
  | "uncertain"
  | "git"
  | "stale";

export interface Rule {
  name: RuleName;
  /** The verdict's code when it fires; null for a rule that allows. */
  code: Condition | null;
  /** When it fires, in one line (docs/how-it-decides.md, `why`). */
  when: string;
  /** What the agent does about it, in one line (`why`); empty for a rule that allows. */
  todo: string;
  /** What to do instead on these facts, where they change it (a peer holds a target the row refused). */
  todoOn?: (f: Facts) => string | null;
  /** The stages whose facts it reads: gathered before it is asked. */
  reads: readonly Stage[];
  /** A stage it reads only on some calls: asked for when `when` holds on the facts already read. */
  wants?: { stage: Stage; when: (f: Facts) => boolean };
  /** The facts its refusal shows (`why`). */
  uses: readonly FactName[];
  /** Its refusal's words when it fires ("" for a rule that allows), else null. Reads only what `reads` and `wants` gathered. */
  fires: (f: Facts) => string | null;
}

const svc = (f: Facts) => f.service!;
const peersOf = (f: Facts): PeerScope[] | null => (f.peers && Array.isArray(f.peers) ? f.peers : null);
/** The targets of a write: an edit's, a patch's, a shell command's named ones. */
const writeTargets = (f: Facts): string[] =>
  f.service?.kind === "edit" ? (f.service.snap.targets ?? []) : [];

export const unknownToolReason = (label: string, tool: string) =>
  `${label}'s tool ${JSON.stringify(tool).slice(0, 80)} is not one Cohent knows, so it cannot tell what the call writes and refuses it. Use the client's own edit, shell or read tools; a person can ask for the tool to be added to Cohent's table.`;

export const peersUnknownReason = (message: string) =>
  `the active peers' claims could not be read (${message}), so this command cannot be checked against their work. Try again in a few seconds; nothing was changed.`;

/** The peers whose live claims cover `targets`, worded as the service words a conflict. */
function holdersIn(targets: readonly string[], whole: boolean, peers: PeerScope[]): ScopeConflict[] {
  return peerConflicts(targets, whole, peers).map((c) => ({
    ...c,
    objective: peers.find((p) => p.intentId === c.intentId)?.objective ?? null,
  }));
}

const conflictOf = (conflicts: ScopeConflict[]) => ({
  code: "SCOPE_CONFLICT",
  message: "a peer holds these paths",
  details: { conflicts },
});

/** Which calls the peers' claims are read for once the table allows: an edit nobody claimed on this call, and every shell call (its watch needs them). */
function peersWanted(f: Facts): boolean {
  const s = f.service;
  if (!s?.bound) return false;
  return (s.kind === "edit" && !s.claimed && writeTargets(f).length > 0) || f.call?.kind === "shell";
}

const TABLE_NAMES: Record<TableCondition, RuleName> = {
  stopped: "stopped",
  unreachable: "unreachable",
  unconfigured: "unconfigured",
  intentNotReady: "intent-not-ready",
  scopeConflict: "scope-conflict",
  outsideScope: "outside-scope",
};
const TABLE_WHEN: Record<TableCondition, string> = {
  stopped: "the session is paused or cancelled from the Control Room",
  unreachable: "the service cannot be reached, or cannot vouch for this call (5xx, rate limited)",
  unconfigured: "the configuration is unusable (no project file, a credential refused)",
  intentNotReady:
    "an edit or a named shell write before a prompt or intent, or while the intent is on plan, wait, duplicate, handoff or closed",
  scopeConflict: "the service refused the claim of the write's targets (a peer holds them)",
  outsideScope: "a write target lies outside the declared scope, or cannot be read",
};
const TABLE_TODO: Record<TableCondition, string> = {
  stopped: "Stop and wait for a person to resume the session in the Control Room.",
  unreachable: "Retry in a few seconds; run node .cohent/cohent.mjs doctor if it persists.",
  unconfigured: "A person pairs or configures the checkout: node .cohent/cohent.mjs doctor says how.",
  intentNotReady: `Publish this prompt's intent (${INTENT_COMMAND}), or follow the intent's action.`,
  scopeConflict: `Work elsewhere, queue (${SCOPE_QUEUE_COMMAND} <path…>) or ask the holder to release.`,
  outsideScope: `Declare a scope that covers the targets: ${SCOPE_COMMAND} <path…>.`,
};
const TABLE_USES: Record<TableCondition, FactName[]> = {
  stopped: ["control"],
  unreachable: ["contact"],
  unconfigured: ["config", "contact"],
  intentNotReady: ["intent", "targets", "peers"],
  scopeConflict: ["claim", "targets", "scope"],
  outsideScope: ["targets", "scope", "peers"],
};
/** The write rows whose refusal names a holder first (guard.ts holderFirst): its advice comes first too. */
const HOLDER_FIRST: ReadonlySet<TableCondition> = new Set(["intentNotReady", "outsideScope"]);

/** A row of the spec's table as a rule: its refusal names the holder of a target first, so it wants the peers' claims then. */
function tableRule(condition: TableCondition): Rule {
  const words = (f: Facts, holders?: ScopeConflict[]) =>
    tableRow(condition, svc(f).kind, holders ? { ...svc(f).snap, holders } : svc(f).snap);
  return {
    name: TABLE_NAMES[condition],
    code: condition,
    when: TABLE_WHEN[condition],
    todo: TABLE_TODO[condition],
    reads: ["call", "caught", "service"],
    wants: {
      stage: "peers",
      when: (f) => {
        if (!svc(f).bound || words(f) === null) return false;
        return holdersWanted({ permission: "deny", condition, reason: "" }, svc(f).snap);
      },
    },
    uses: TABLE_USES[condition],
    ...(HOLDER_FIRST.has(condition)
      ? {
          todoOn: (f: Facts) => {
            const peers = peersOf(f);
            return peers && holdersIn(writeTargets(f), false, peers).length
              ? `${TABLE_TODO.scopeConflict} Then: ${TABLE_TODO[condition]}`
              : null;
          },
        }
      : {}),
    fires: (f) => {
      const peers = peersOf(f);
      const snap = svc(f).snap;
      const wanted = peers && holdersWanted({ permission: "deny", condition, reason: "" }, snap);
      return words(f, wanted ? holdersIn(snap.targets!, false, peers) : undefined);
    },
  };
}

/** The rules, in order: the first that fires decides. */
export const RULES: readonly Rule[] = [
  {
    name: "unknown-tool",
    code: "unconfigured",
    when: "a tool of a known client that no table of its dialect knows: what it writes cannot be told",
    todo: "Use the client's own edit, shell or read tools.",
    reads: [],
    uses: ["tool"],
    fires: (f) => (f.unknownTool === null ? null : unknownToolReason(f.label, f.unknownTool)),
  },
  {
    name: "guard-files",
    code: "guardFiles",
    when: "the call writes, moves or deletes the guard's own files (no intent, scope or exemption makes it an agent's)",
    todo: "Leave Cohent's guard files to a person (npx cohent init); reading them is fine.",
    reads: ["call"],
    uses: ["guard-files", "command"],
    fires: (f) => guardFilesVerdict(f.guardWrites!)?.reason ?? null,
  },
  {
    name: "exempt",
    code: null,
    when: "the adapter's own command (node .cohent/cohent.mjs …): relayed, so the protocol cannot lock itself out",
    todo: "",
    reads: ["call"],
    uses: ["command"],
    fires: (f) => (f.exempt ? "" : null),
  },
  {
    name: "caught-write",
    code: "caughtWrite",
    when: "an earlier call wrote a peer's paths and the client could not be told then: this call carries it",
    todo: `Undo the caught write first (${RESTORE_COMMAND} <path…>), then write only inside your scope.`,
    reads: ["call", "caught"],
    uses: ["caught"],
    fires: (f) => f.caught ?? null,
  },
  {
    name: "not-guarded",
    code: null,
    when: "neither an edit nor a shell tool (a read, a search): nothing to hold",
    todo: "",
    reads: ["call"],
    uses: ["tool"],
    fires: (f) => (f.call!.kind === null ? "" : null),
  },
  ...GUARD_TABLE.map((row) => tableRule(row.condition)),
  {
    name: "peers-unknown",
    code: "peersUnknown",
    when: "the table allows, but the peers' claims this call is checked against cannot be read",
    todo: "Try again in a few seconds; nothing was changed.",
    reads: ["call", "caught", "service"],
    wants: { stage: "peers", when: peersWanted },
    uses: ["peers"],
    fires: (f) => (f.peers && !Array.isArray(f.peers) ? peersUnknownReason(f.peers.error) : null),
  },
  {
    name: "peer-holds",
    code: "scopeConflict",
    when: "a write the local scope calls this session's own, which a peer's live claim covers (a stale or forged local scope)",
    todo: TABLE_TODO.scopeConflict,
    reads: ["call", "caught", "service"],
    wants: { stage: "peers", when: peersWanted },
    uses: ["targets", "scope", "peers"],
    fires: (f) => {
      const peers = peersOf(f);
      const s = svc(f);
      if (!peers || s.kind !== "edit" || s.claimed || !writeTargets(f).length) return null;
      const conflicts = holdersIn(writeTargets(f), false, peers);
      if (conflicts.length === 0) return null;
      const v = assess(
        { kind: "edit" },
        { ...s.snap, holders: conflicts, claimError: conflictOf(conflicts) },
      );
      return v.permission === "deny" ? v.reason : null;
    },
  },
  {
    name: "uncertain-write-held",
    code: "scopeConflict",
    when: "a shell command may write a path a peer holds (a one-liner's path, a word built at run time), or the whole checkout while a peer holds anything",
    todo: TABLE_TODO.scopeConflict,
    reads: ["call", "caught", "service"],
    wants: { stage: "peers", when: peersWanted },
    uses: ["command", "uncertain", "peers"],
    fires: (f) => {
      const peers = peersOf(f);
      const hold = svc(f).hold;
      if (!peers || !hold || f.call!.kind !== "shell") return null;
      const conflicts = peerConflicts(hold.uncertain, hold.whole, peers);
      if (conflicts.length === 0) return null;
      const v = assess(
        { kind: "edit" },
        {
          ...svc(f).snap,
          targets: [...new Set(conflicts.flatMap((c) => c.paths))],
          targetError: null,
          shellWrite: true,
          claimError: conflictOf(conflicts),
        },
      );
      return v.permission === "deny" ? v.reason : null;
    },
  },
  {
    name: "git-refused",
    code: "gitRefused",
    when: "a Git command that stages, commits, stashes or discards would take a peer's changes",
    todo: "Use the command the refusal names instead (node .cohent/cohent.mjs commit for your scope's changes).",
    reads: ["call", "caught", "service"],
    wants: {
      stage: "git",
      when: (f) => peersOf(f) !== null && f.call!.kind === "shell" && !!f.call!.command,
    },
    uses: ["command", "git"],
    fires: (f) =>
      f.git && !f.git.allowed
        ? f.git.reason.trim() || "git command refused: it would take a peer's changes."
        : null,
  },
  {
    name: "stale-write",
    code: "staleWrite",
    when: "a write names a file another session changed since this session last read it",
    todo: "Read the file again, then make the change over its current bytes.",
    reads: ["call", "caught", "service"],
    wants: { stage: "stale", when: (f) => svc(f).bound && writeTargets(f).length > 0 },
    uses: ["targets", "stale"],
    fires: (f) => (f.stale?.length ? staleReason(f.stale) : null),
  },
  {
    name: "allow",
    code: null,
    when: "no rule above fires",
    todo: "",
    reads: ["call", "caught", "service"],
    uses: [],
    fires: () => "",
  },
];

export type Decision = { need: Stage } | { rule: Rule; verdict: Verdict };

const ALLOW: Verdict = { permission: "allow", condition: null, reason: null };

const STAGE_READ: Record<Stage, (f: Facts) => boolean> = {
  call: (f) => f.call !== undefined,
  caught: (f) => f.caught !== undefined,
  service: (f) => f.service !== undefined,
  peers: (f) => f.peers !== undefined,
  git: (f) => f.git !== undefined,
  stale: (f) => f.stale !== undefined,
};

/**
 * The decision: walks RULES in order and returns the first that fires with
 * its verdict, or the stage of facts the next rule needs read first. Pure.
 */
export function decide(f: Facts, rules: readonly Rule[] = RULES): Decision {
  for (const rule of rules) {
    const missing = rule.reads.find((st) => !STAGE_READ[st](f));
    if (missing) return { need: missing };
    if (rule.wants && !STAGE_READ[rule.wants.stage](f) && rule.wants.when(f))
      return { need: rule.wants.stage };
    const reason = rule.fires(f);
    if (reason === null) continue;
    if (rule.code === null) return { rule, verdict: ALLOW };
    return { rule, verdict: { permission: "deny", condition: rule.code, reason, rule: rule.name } };
  }
  throw new Error("the rule list ends with a rule that always fires");
}

export const ruleNamed = (name: string): Rule | undefined => RULES.find((r) => r.name === name);

const list = (xs: readonly string[], max = 10) =>
  xs.slice(0, max).join(", ") + (xs.length > max ? ` and ${xs.length - max} more` : "") || "none";

/** One fact, as `why` prints it; null when the facts hold nothing for it. */
const FACTS: Record<FactName, (f: Facts) => string | null> = {
  tool: (f) => (f.unknownTool ?? f.tool) || null,
  command: (f) => (f.call?.command ? f.call.command.slice(0, 200) : null),
  targets: (f) => (f.service?.snap.targets ? list(f.service.snap.targets) : null),
  "guard-files": (f) => (f.guardWrites?.length ? list(f.guardWrites.map((w) => w.path)) : null),
  caught: (f) => (f.caught ? "a write caught after an earlier call" : null),
  control: (f) => f.service?.snap.control ?? null,
  contact: (f) => {
    const e = f.service?.snap.contactError;
    return e ? `${e.code}: ${e.message.slice(0, 160)}` : f.service ? "ok" : null;
  },
  config: (f) => f.service?.snap.configError?.slice(0, 160) ?? null,
  intent: (f) => {
    const s = f.service?.snap;
    if (!s) return null;
    return s.intentId ? `${s.intentId} (${s.action ?? "plan"})` : s.missedPublish ? "missed publish" : "none";
  },
  scope: (f) =>
    f.service ? `${list(f.service.snap.scope)}${f.service.snap.explicitScope ? " (declared)" : ""}` : null,
  claim: (f) => {
    const e = f.service?.snap.claimError;
    return e ? `${e.code}: ${e.message.slice(0, 160)}` : null;
  },
  peers: (f) => {
    if (!f.peers) return null;
    if (!Array.isArray(f.peers)) return `unreadable (${f.peers.error.slice(0, 160)})`;
    const held = f.service ? holdersIn(writeTargets(f), false, f.peers) : [];
    return held.length
      ? held.map((c) => `${inert(c.person)} (${inert(c.intentId, 40)}) holds ${list(c.paths)}`).join("; ")
      : `${f.peers.length} active`;
  },
  uncertain: (f) => {
    const h = f.service?.hold;
    return h ? `${h.whole ? "the whole checkout; " : ""}${list(h.uncertain)}` : null;
  },
  git: (f) => (f.git && !f.git.allowed ? `would take ${list(f.git.paths)}` : null),
  stale: (f) =>
    f.stale?.length
      ? f.stale.map((x) => `${x.path} (by ${inert(x.by.person ?? x.by.sessionId)})`).join(", ")
      : null,
};

/** The facts a rule read, as `why` shows them. */
export function factsShown(rule: Rule, f: Facts): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of rule.uses) {
    const v = FACTS[name](f);
    if (v !== null) out[name] = v;
  }
  return out;
}
