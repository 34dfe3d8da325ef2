import type { Verdict } from "../guard/guard.js";
import type { Dialect, HookEvent } from "../hosts/dialect.js";
import { scrubPaths } from "@cohent/client";

/**
 * The hook's answers, the render half of the transport. The handlers say
 * what to answer (a deny with its reason, context for the model, nothing);
 * render() says it in the calling host's words (hosts/): every host's deny
 * carries a non-empty reason where its model reads it, because each fails
 * open on anything less.
 */

export interface Answer {
  stdout?: string;
  stderr?: string;
  exitCode: number;
  /** The PreToolUse verdict, when there was one. */
  verdict?: Verdict;
  /** The refusal's text, as the model reads it; rendered by the host's dialect. */
  deny?: string;
  /** Context for the model at this event; rendered by the host's dialect, dropped where the host reads none. */
  context?: string;
  /** Characters of context injected into the agent. */
  injected: number;
}

export const SILENT: Answer = { exitCode: 0, injected: 0 };

export const denyText = (reason: string) => `Cohent: ${reason.trim() || "Cohent refused this tool call."}`;

export function deny(verdict: Verdict & { permission: "deny" }): Answer {
  return { exitCode: 0, verdict, deny: denyText(verdict.reason), injected: 0 };
}

export function inject(text: string): Answer {
  return { exitCode: 0, context: text, injected: text.length };
}

/** The answer in the host's dialect: a deny or context rendered, an allowed tool call's explicit allow where silence would refuse. */
export function render(d: Dialect, event: HookEvent | null, a: Answer): Answer {
  if (a.deny !== undefined) return { ...a, ...d.deny(a.deny) };
  if (a.context !== undefined) {
    const stdout = event ? d.context(event, a.context) : undefined;
    return stdout ? { ...a, stdout } : { ...a, injected: 0 };
  }
  if (event === "PreToolUse" && a.exitCode === 0 && !a.stdout) {
    const allow = d.allow();
    if (allow) return { ...a, stdout: allow };
  }
  return a;
}

/** What the model reads names no absolute path of this machine (an error message may carry one). */
export function scrubbed(a: Answer, root: string | null): Answer {
  return {
    ...a,
    ...(a.stdout ? { stdout: scrubPaths(a.stdout, root) } : {}),
    ...(a.stderr ? { stderr: scrubPaths(a.stderr, root) } : {}),
  };
}
