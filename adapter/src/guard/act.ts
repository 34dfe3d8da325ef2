import { takeNotices, type Refusal, type SessionFile, reportGuard } from "@cohent/client";
import type { GuardRequest } from "@cohent/protocol";
import { notExemptNote } from "./exemption.js";
import { reportedKind, withNotices, type Verdict } from "./guard.js";
import type { Gathering } from "./guard-shell.js";
import { noteBackground, startsBackground } from "../held/background.js";
import { noteCall, reportCaught, watchCall } from "../held/call.js";
import { factsShown, type Facts, type Rule } from "./rules.js";
import type { PeerScope } from "../git/git-guard.js";

/**
 * What a decision needs done (rules.ts decides, guard-shell.ts gathers):
 * a refusal is reported where the service cannot see it, carries the
 * notices received on this call and is kept for `why`; an allowed call is
 * watched (a shell call) and noted as this session's own writes under way.
 * Returns the verdict the transport answers with; the claim an edit needed
 * was made while gathering (the service's answer to it is a fact).
 */
export async function act(g: Gathering, d: { rule: Rule; verdict: Verdict }): Promise<Verdict> {
  const { facts: f, root, s } = g;
  const verdict = d.verdict;
  if (verdict.permission === "deny") {
    if (f.service && g.checkout && s) {
      const report = reportOf(verdict, f, d.rule);
      if (report)
        await reportGuard(g.checkout, s, { ...report, tool: g.tool, rule: d.rule.name }).catch(
          () => undefined,
        );
    }
    let reason = verdict.reason;
    // Notices received on this call open a refusal's reason (a refused call gets no PostToolUse); an allowed call shows them there.
    if (f.service && s) reason = withNotices(verdict, takeNotices(s)).reason!;
    if (f.service && f.notExempt) reason = `${reason} ${notExemptNote(f.notExempt)}`;
    if (s) keepRefusal(s, d.rule, f, reason);
    return { ...verdict, reason };
  }
  if (d.rule.name !== "allow" || !f.service) return verdict;
  const call = f.call!;
  // Every shell call is watched, one the reader takes for a read included (held/call.ts).
  if (root && g.checkout && s && call.kind === "shell") {
    const between = await watchCall(root, s, g.callKey, {
      tool: g.tool,
      command: call.command,
      cwd: g.cwd ?? null,
      peers: f.peers as PeerScope[],
    });
    if (between) await reportCaught(g.checkout, s, between);
  }
  // Our own writes under way, so that a peer's check after its call does not blame them on it (held/call.ts).
  const targets = f.service.snap.targets ?? [];
  if (root && s && call.kind !== null)
    noteCall(root, s, call.kind === "shell" ? [...s.state.scope, ...targets] : targets);
  // A job left running names its session as the likely writer of what changes later (held/background.ts).
  if (root && s && call.kind === "shell" && startsBackground(call.command, g.input))
    noteBackground(root, s.id, s.state.scope);
  return verdict;
}

/**
 * Rules whose refusal is not reported: the service refused the claim itself and counts it
 * (`scope-conflict`), or it could not be reached or asked (a report would only wait on it).
 */
const UNREPORTED: ReadonlySet<Rule["name"]> = new Set([
  "scope-conflict",
  "unreachable",
  "unconfigured",
  "peers-unknown",
]);

/**
 * Refusals the service cannot see, reported with their rule so that they count by it, once the
 * service was asked on this call (a refusal decided before that makes no contact with it).
 */
function reportOf(v: Verdict, f: Facts, rule: Rule): { kind: GuardRequest["kind"]; paths: string[] } | null {
  if (UNREPORTED.has(rule.name)) return null;
  if (v.condition === "gitRefused" && f.git && !f.git.allowed)
    return { kind: "git-peer-changes", paths: f.git.paths };
  const paths = f.service!.snap.targets ?? [];
  return { kind: reportedKind(v, f.service!.snap) ?? "refused", paths };
}

/** How many refusals `why` keeps per session, and how much of each reason. */
export const KEPT_REFUSALS = 5;
const REASON_CHARS = 2000;

/** Keeps the refusal in the session's state (saved with it), for `why`. */
function keepRefusal(s: SessionFile, rule: Rule, f: Facts, reason: string): void {
  const r: Refusal = {
    at: new Date().toISOString(),
    rule: rule.name,
    code: rule.code ?? "",
    tool: f.unknownTool ?? f.tool,
    facts: factsShown(rule, f),
    todo: rule.todoOn?.(f) ?? rule.todo,
    reason: reason.length > REASON_CHARS ? reason.slice(0, REASON_CHARS - 1) + "…" : reason,
  };
  s.update((st) => {
    st.refusals = [...(st.refusals ?? []), r].slice(-KEPT_REFUSALS);
  });
}
