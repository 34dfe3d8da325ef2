import { readProject, recordUsage, usageTarget } from "@cohent/client";
import type { HookResult } from "./hook.js";

/** The usage ledger's row of one hook call, whichever way it ran: a process per call or in the host's process. */

function repoTag(root: string | null): string | null {
  if (!root || !usageTarget().file) return null;
  try {
    return readProject(root).repository;
  } catch {
    return null;
  }
}

/** One metadata row per hook call when the usage ledger is on: the event, the verdict and the rule that refused, the injected characters. */
export function recordHookUsage(root: string | null, r: HookResult, ms: number): void {
  if (!usageTarget().file) return;
  const denied = r.verdict?.permission === "deny";
  const row = {
    op: `hook:${r.event}`,
    surface: "hook" as const,
    client: r.client,
    model: r.model,
    agentId: r.agentId,
    chars: r.injected,
    ms,
    repo: repoTag(root),
  };
  const rule = r.verdict?.permission === "deny" ? r.verdict.rule : undefined;
  recordUsage({ ...row, ok: r.exitCode === 0 && !denied, code: denied ? "DENIED" : undefined, rule });
}
