import { missedPublish } from "../guard/guard.js";
import { decideCall, type Gathering } from "../guard/guard-shell.js";
import { act } from "../guard/act.js";
import { isSpawn, seen, spawned } from "../guard/subagents.js";
import type { SessionFile } from "@cohent/client";
import type { Call } from "./hook.js";
import { deny, SILENT, type Answer } from "./hook-answer.js";
import { track } from "./hook-stop.js";
import { callKeyOf, caughtBefore } from "./hook-caught.js";

/** What the PreToolUse handler does with the adapter's own exempt command: relays it (relay.ts). */
export type OnExempt = (s: SessionFile, argv: string[], cwd: string, scriptUrl: string) => Promise<Answer>;

/**
 * The PreToolUse handler: the guard's one decision on one tool call.
 * guard-shell.ts gathers the facts the rules ask for, rules.ts decides (the
 * first rule that fires), act.ts does what the verdict needs; this answers.
 */
export const preToolUseWith = (onExempt: OnExempt) =>
  async function preToolUse({
    p,
    root,
    s,
    cwd: runsIn,
    scriptUrl,
    agentId,
    dialect,
    unknownTool,
  }: Call): Promise<Answer> {
    const g: Gathering = {
      tool: p.tool_name ?? "",
      input: p.tool_input,
      root,
      s,
      runsIn,
      agentId,
      callKey: callKeyOf(p),
      facts: { tool: p.tool_name ?? "", label: dialect.label, unknownTool: unknownTool ?? null },
      prepare: () => {
        // A publish the last prompt missed: its stale intent goes first, so that a relayed `intent` publishes a fresh one.
        const missed = s ? missedPublish(s.state) : null;
        if (missed) s!.set(missed.change);
        if (s && agentId) track(s, (t) => seen(t, agentId));
        return !!missed?.stale;
      },
      // A write caught after an earlier call that the host could not be told of then (no PostToolUse answer, or
      // none sent): this call carries it. Not the adapter's own command, which may be the `restore` that undoes it.
      caught: () => (root && s ? caughtBefore(root, s) : Promise.resolve(null)),
    };
    const decision = await decideCall(g);
    const verdict = await act(g, decision);
    if (verdict.permission === "deny") return deny(verdict);
    if (decision.rule.name === "exempt") return onExempt(s!, g.exempt!, g.cwd!, scriptUrl);
    if (decision.rule.name === "not-guarded") {
      if (s && isSpawn(p.tool_name, agentId)) track(s, spawned);
      return SILENT;
    }
    return { ...SILENT, verdict };
  };
