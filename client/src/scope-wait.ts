import { BOUNDS } from "@cohent/protocol/bounds";
import type { Envelope, FailureEnvelope, ScopeResponse } from "@cohent/protocol";
import * as client from "./service/client.js";
import { fail, ok } from "./envelope.js";
import type { SessionFile } from "./state/runtime.js";

/**
 * `scope --wait <seconds>`: the claim has joined the queue (its refusal
 * carries the place); long-poll in steps of at most BOUNDS.waitSeconds until
 * a packet carries the `scope-granted` notice, or the time is up. Packets
 * that arrive meanwhile stay pending for the next PostToolUse, as the
 * guard's polls leave them; the grant's packet is the answer.
 */

/** How `--wait` ended when it did not end in a grant, for the refusal's details. */
export interface WaitOutcome {
  seconds: number;
  /** Whether it waited at all: under the sandbox relay a hook cannot, and the claim stays queued. */
  waited: boolean;
}

/** A relayed answer that queued without waiting: the command that receives it may wait itself. */
export function queuedUnwaited(env: Envelope<unknown> | undefined): env is FailureEnvelope {
  if (!env || env.ok || env.error.code !== "SCOPE_CONFLICT") return false;
  const wait = (env.error.details as { wait?: WaitOutcome } | undefined)?.wait;
  return !!wait && !wait.waited;
}

/** Parses a --wait value: whole seconds from 1 to BOUNDS.scopeWaitSeconds, else null. */
export function waitSeconds(raw: unknown): number | null {
  const n = typeof raw === "string" && /^\d{1,4}$/.test(raw.trim()) ? Number(raw) : raw;
  return typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= BOUNDS.scopeWaitSeconds ? n : null;
}

/** The queued refusal, with how the wait went: still queued, its place unchanged as far as this call knows. */
export function stillQueued(refused: FailureEnvelope, outcome: WaitOutcome): FailureEnvelope {
  const message = outcome.waited
    ? `Still queued after ${outcome.seconds} s: the scope was not granted in time. The claim stays in the queue at the place below; a later packet says when it is granted.`
    : "Queued, without waiting: under the sandbox relay the hook that performs this command cannot wait (its time budget is 30 s). The claim stays in the queue; a later packet says when it is granted.";
  const details = { ...(refused.error.details as object), wait: outcome };
  return fail("scope", "SCOPE_CONFLICT", message, details, refused.meta);
}

/**
 * The time is up: the same claim once more, queued. The queue keeps the place
 * of a claim asked again with the same paths, so this either finds it granted
 * (a grant another process of the session was told of) or reports its place now.
 */
async function lastLook(
  c: client.Checkout,
  s: SessionFile,
  refused: FailureEnvelope,
  seconds: number,
  paths: string[],
  previous: string[],
): Promise<Envelope<ScopeResponse>> {
  const again = await client.claim(c, s, paths, true, true);
  if (again.ok) return again;
  const now =
    again.error.code === "SCOPE_CONFLICT" && client.queuePlace(again.error.details) ? again : refused;
  now.error.details = { ...(now.error.details as object), previousScope: previous, requested: paths };
  return stillQueued(now, { seconds, waited: true });
}

export async function waitForGrant(
  c: client.Checkout,
  s: SessionFile,
  refused: FailureEnvelope,
  seconds: number,
  paths: string[],
  previous: string[],
): Promise<Envelope<ScopeResponse>> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const left = Math.ceil((deadline - Date.now()) / 1000);
    if (left <= 0) return lastLook(c, s, refused, seconds, paths, previous);
    const before = s.state.pending;
    const env = await client.poll(c, s, Math.min(left, BOUNDS.waitSeconds));
    if (!env.ok) return env;
    if (env.data.control !== "active")
      return fail(
        "scope",
        env.data.control === "paused" ? "SESSION_PAUSED" : "SESSION_CANCELLED",
        `This session was ${env.data.control === "paused" ? "paused" : "cancelled"} from the Control Room while it waited for its scope${s.state.controlReason ? ` (${s.state.controlReason})` : ""}.`,
      );
    const packet = env.data.packet;
    const grant = packet?.notices?.find((n) => n.kind === "scope-granted");
    if (packet && grant) {
      // This packet is the answer, shown (and acknowledged) now, not at the next PostToolUse.
      s.set({ pending: before });
      return ok("scope", { intentId: s.state.intentId!, paths: grant.paths, replaced: previous, packet });
    }
    const gone = packet?.notices?.find((n) => n.kind === "queue-left");
    if (gone)
      return fail(
        "scope",
        "SCOPE_CONFLICT",
        `The claim left the queue (${gone.reason ?? "no reason given"}) before it was granted.`,
        { ...(refused.error.details as object), wait: { seconds, waited: true } },
      );
  }
}
