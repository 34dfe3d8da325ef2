// The resolver's actions and what each one means downstream, free of zod so that the
// adapter's hook bundle can import it. Every class of actions and every guidance text
// lives here once: the resolver's reasons, the hook's refusals, the CLI, the metrics and
// the console all read these.

/** The resolver's answers, plus `plan` for a prompt with no structured intent yet. */
export const ACTIONS = ["plan", "wait", "duplicate", "handoff", "parallel", "proceed"] as const;
export type ActionName = (typeof ACTIONS)[number];

/** The states a work intent may end in besides its live action. */
export type IntentEnd = "completed" | "abandoned";

const set = (...xs: ActionName[]): ReadonlySet<string> => new Set(xs);

/** Redirections: the agent must replan (the `intent` command exits 2; a Stop ends `blocked`). */
export const REPLAN_ACTIONS = set("wait", "duplicate", "handoff");
/** The guarded adapter refuses a visible edit on these. */
export const EDIT_BLOCKING_ACTIONS = set("plan", "wait", "duplicate", "handoff");
/** Decisions that named a peer: each is a potential overlap. */
export const OVERLAP_ACTIONS = set("wait", "duplicate", "handoff", "parallel");

export const isReplan = (a: string | null | undefined): boolean => !!a && REPLAN_ACTIONS.has(a);
export const blocksEdits = (a: string | null | undefined): boolean => EDIT_BLOCKING_ACTIONS.has(a ?? "plan");

/** The one way to publish a structured intent, as the agent types it. */
export const INTENT_COMMAND =
  `node .cohent/cohent.mjs intent '{"objective":"…","plan":["…"],"components":[],"dependsOn":[],` +
  `"deferred":[],"outputs":["…"],"requires":[],"capabilities":[],"state":"planned"}'`;
/** Short form for refusals, where the full template was already injected once. */
export const INTENT_COMMAND_SHORT = "node .cohent/cohent.mjs intent '…'";

/** What the agent should do next, per action or end state: one text each. */
export const GUIDANCE: Record<ActionName | IntentEnd, string> = {
  plan: `no structured intent has been published for this prompt. Publish one first: ${INTENT_COMMAND_SHORT}`,
  wait: `an output this intent depends on is still being produced by a peer. Publish a narrower intent (${INTENT_COMMAND_SHORT}) that can proceed without it.`,
  duplicate: `this intent duplicates a peer's active work (same objective and output). Publish a narrower or different intent with ${INTENT_COMMAND_SHORT}.`,
  handoff: `this intent requires a capability an active peer reported. Publish a narrower intent with ${INTENT_COMMAND_SHORT}, or hand this part over.`,
  parallel: "a peer works on a shared component or a deferred output; keep to your own outputs.",
  proceed: "no active peer conflicts with this intent; path checks still guard every edit.",
  completed: `this work intent is completed. A new prompt publishes a new one; or publish an intent with ${INTENT_COMMAND_SHORT}.`,
  abandoned: `this work intent was abandoned. Publish a new intent with ${INTENT_COMMAND_SHORT}.`,
};

/** How the console and the recap phrase a decision that names peers. */
export const DECISION_VERB: Record<ActionName, string> = {
  plan: "plans",
  wait: "waits for",
  duplicate: "duplicates",
  handoff: "hands off to",
  parallel: "runs in parallel with",
  proceed: "proceeds",
};
