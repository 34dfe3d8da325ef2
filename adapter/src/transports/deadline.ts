import { deadlineReason } from "../guard/guard.js";
import { denyText } from "./hook-answer.js";
import type { Dialect } from "../hosts/dialect.js";
import { DEADLINE_MS } from "./deadline-ms.js";

/**
 * The hook's own deadline. Every hooked client runs the tool when a hook
 * hangs past its timeout (docs/clients.md),
 * and macOS has no `timeout` program, so the adapter answers a refusal
 * itself, in the host's dialect, below the 30 s the wiring gives the client. Other events end silently: they fail soft (an exit 2 would
 * block a prompt, or keep the agent running on Stop).
 */

export { DEADLINE_MS };

/** What the hook tells the deadline as it goes: the event, and how to save the session (the missed-publish mark) if time runs out. */
export interface Watch {
  event: string | null;
  /** The host's dialect, once known: the refusal is said in it (null: a host Cohent does not know, exit 2). */
  dialect: Dialect | null;
  save?: () => void;
}

/**
 * Arms the deadline. The timer holds the process open on purpose: a promise
 * that never settles would otherwise let node exit 0 with no output, which
 * both clients read as "allow". disarm() once the answer is written.
 */
export function armDeadline(dialect: Dialect | null, ms = DEADLINE_MS): Watch & { disarm(): void } {
  const watch: Watch = { event: null, dialect };
  const timer = setTimeout(() => {
    try {
      watch.save?.();
    } catch {
      /* the answer matters more */
    }
    const event = watch.event;
    // Unknown yet (stdin not read): refuse, as for PreToolUse.
    if (event !== "PreToolUse" && event !== null) process.exit(0);
    const reason = denyText(deadlineReason(ms));
    const out = watch.dialect ? watch.dialect.deny(reason) : { stderr: reason, exitCode: 2 };
    const exit = () => process.exit(out.exitCode);
    if (out.stdout) process.stdout.write(out.stdout + "\n", exit);
    else if (out.stderr) process.stderr.write(out.stderr + "\n", exit);
    else exit();
  }, ms);
  return Object.assign(watch, { disarm: () => clearTimeout(timer) });
}
