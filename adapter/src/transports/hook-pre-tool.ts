import { notExemptNote, parseExemptCommand } from "../guard/exemption.js";
import { missedPublish } from "../guard/guard.js";
import { guard, guardFilesCheck } from "../guard/guard-shell.js";
import { isSpawn, seen, spawned } from "../guard/subagents.js";
import { classify } from "../guard/tools.js";
import { checkoutCwd } from "../guard/checkout-cwd.js";
import type { SessionFile } from "@cohent/client/state/runtime.js";
import type { Call } from "./hook.js";
import { deny, SILENT, type Answer } from "./hook-answer.js";
import { track } from "./hook-stop.js";
import { callKeyOf, caughtBefore } from "./hook-caught.js";

/** The refusal of a tool no table of the host's dialect knows: what it writes cannot be told. */
export const unknownToolReason = (label: string, tool: string) =>
  `${label}'s tool ${JSON.stringify(tool).slice(0, 80)} is not one Cohent knows, so it cannot tell what the call writes and refuses it. Use the client's own edit, shell or read tools; a person can ask for the tool to be added to Cohent's table.`;

/**
 * What the PreToolUse handler does with the adapter's own exempt command:
 * the whole adapter relays it (relay.ts); the guard's part hands the call
 * over (HANDOVER), since the relay needs the operation layer it leaves out.
 */
export type OnExempt = (s: SessionFile, argv: string[], cwd: string, scriptUrl: string) => Promise<Answer>;

/** The PreToolUse handler: the guard's decision on one tool call. */
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
    if (unknownTool !== undefined)
      return deny({
        permission: "deny",
        condition: "unconfigured",
        reason: unknownToolReason(dialect.label, unknownTool),
      });
    // A publish the last prompt missed: its stale intent goes first, so that a relayed `intent` publishes a fresh one.
    const missed = s ? missedPublish(s.state) : null;
    if (missed) s!.set(missed.change);
    if (s && agentId) track(s, (t) => seen(t, agentId));
    const call = classify(p.tool_name ?? "", p.tool_input);
    // Where the call runs, named by its place in the checkout when a symbolic link leads there (checkout-cwd.ts).
    const cwd = call.kind === null ? runsIn : checkoutCwd(runsIn, root);
    // The guard's own files first: no exemption, intent or scope makes their write an agent's.
    const guardFiles = guardFilesCheck(p.tool_name ?? "", p.tool_input, call, cwd, root);
    if (guardFiles?.permission === "deny") return deny(guardFiles);
    // The adapter's own command but for a prefix that is not inert: an ordinary shell command, and its deny says why.
    let notExempt: string | null = null;
    let exempt: string[] | null = null;
    if (call.kind === "shell" && call.command !== null && root && s) {
      const ex = parseExemptCommand(call.command, { cwd, repoRoot: root, sessionId: s.id });
      if (ex.exempt) exempt = ex.argv;
      else if (ex.prefix) notExempt = ex.why;
    }
    // A write caught after an earlier call that the host could not be told of then (no PostToolUse answer, or
    // none sent): this call carries it. Not the adapter's own command, which may be the `restore` that undoes it.
    const caught = root && s && !exempt ? await caughtBefore(root, s) : null;
    if (caught) return deny({ permission: "deny", condition: "scopeConflict", reason: caught });
    if (call.kind === null) {
      if (s && isSpawn(p.tool_name, agentId)) track(s, spawned);
      return SILENT;
    }
    if (exempt) return onExempt(s!, exempt, cwd, scriptUrl);
    const verdict = await guard(p.tool_name ?? "", call, cwd, root, s, {
      missedPublish: !!missed?.stale,
      agentId,
      callKey: callKeyOf(p),
      input: p.tool_input,
    });
    if (verdict.permission !== "deny") return { ...SILENT, verdict };
    return deny(
      notExempt ? { ...verdict, reason: `${verdict.reason} ${notExemptNote(notExempt)}` } : verdict,
    );
  };
