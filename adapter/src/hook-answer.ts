import type { Verdict } from "./guard.js";
import { scrubPaths } from "./redact.js";

/**
 * The hook's answers on stdout/stderr, the render half of the transport. A
 * deny is always the JSON hookSpecificOutput form with a non-empty reason
 * (both clients fail open on anything less).
 */

export interface Answer {
  stdout?: string;
  stderr?: string;
  exitCode: number;
  /** The PreToolUse verdict, when there was one. */
  verdict?: Verdict;
  /** Characters of context injected into the agent. */
  injected: number;
}

export const SILENT: Answer = { exitCode: 0, injected: 0 };

export function deny(verdict: Verdict & { permission: "deny" }): Answer {
  const permissionDecisionReason = `Cohent: ${verdict.reason.trim() || "Cohent refused this tool call."}`;
  return {
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason,
      },
    }),
    exitCode: 0,
    verdict,
    injected: 0,
  };
}

export function inject(event: string, text: string): Answer {
  return {
    stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } }),
    exitCode: 0,
    injected: text.length,
  };
}

/** What the model reads names no absolute path of this machine (an error message may carry one). */
export function scrubbed(a: Answer, root: string | null): Answer {
  return {
    ...a,
    ...(a.stdout ? { stdout: scrubPaths(a.stdout, root) } : {}),
    ...(a.stderr ? { stderr: scrubPaths(a.stderr, root) } : {}),
  };
}
