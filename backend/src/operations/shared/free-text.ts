import {
  BOUNDS,
  CohentError,
  ControlRequest,
  Goal,
  IntentRecord,
  PairingStart,
  redact,
  type CheckpointRequest,
  type IntentRequest,
  type PublishRequest,
  type Usage,
} from "@cohent/protocol";

/**
 * The free text the server stores or renders, redacted here whoever sent it
 * (the adapter redacts before sending too; a custom integration over HTTP
 * may not). One function per request, one line per field, each called
 * first thing by its operation, so every transport passes it. Redaction is
 * idempotent (the adapter's markers stay as they are) and linear in the
 * text (protocol redact.ts). A marker can be longer than the secret it
 * replaces, so the result is clipped back to the field's bound: stored text
 * keeps the protocol's bounds, and a stored record still parses.
 *
 * Not free text, and left as sent: paths (normalized repository paths;
 * redacting one would change what it claims), the x-cohent-session and
 * x-cohent-agent keys (identifiers of a restricted alphabet), the guard
 * report's `tool` (not stored).
 */

/** Redacted, then cut to `max` characters on a code point. */
export function freeText(text: string, max: number): string {
  const out = redact(text);
  if (out.length <= max) return out;
  const cut = out.slice(0, max);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

const optional = (text: string | undefined, max: number) =>
  text === undefined ? undefined : freeText(text, max);

function usage(u: Usage | undefined): Usage | undefined {
  return u && { ...u, source: freeText(u.source, BOUNDS.identityChars) };
}

export function publishText(req: PublishRequest): PublishRequest {
  return {
    ...req,
    prompt: freeText(req.prompt, BOUNDS.promptChars),
    clientName: optional(req.clientName, BOUNDS.identityChars),
    model: optional(req.model, BOUNDS.identityChars),
  };
}

const NAME_LISTS = ["components", "dependsOn", "deferred", "outputs", "requires", "capabilities"] as const;

/**
 * The record's prose (objective, plan, blockers) is redacted; its names are
 * matched across peers and hold no room for a marker ([ ] are not name
 * characters), so a name shaped like a credential is refused instead. The
 * redacted record must still be a record (its JSON bound).
 */
export function intentText(req: IntentRequest): IntentRequest {
  const r = req.intent;
  for (const list of NAME_LISTS)
    r[list].forEach((name, i) => {
      if (redact(name) !== name)
        throw new CohentError(
          "INVALID_INPUT",
          `intent.${list}[${i}] looks like a credential (${redact(name)}); names are shown to every peer: use a plain name.`,
        );
    });
  const step = (s: string) => freeText(s, BOUNDS.stepChars);
  const parsed = IntentRecord.safeParse({
    ...r,
    objective: freeText(r.objective, BOUNDS.objectiveChars),
    plan: r.plan.map(step),
    blockers: r.blockers.map(step),
  });
  if (!parsed.success)
    throw new CohentError(
      "INVALID_INPUT",
      `After its secrets were redacted the intent no longer fits (${parsed.error.issues[0]?.message ?? "invalid"}); send it without them.`,
    );
  return { ...req, intent: parsed.data, usage: usage(req.usage) };
}

/**
 * A person's text, from the Control Room or the admin CLI: a pause, cancel or
 * release reason, the repository's goal (and a token's client, people/admin).
 */
export const reasonText = (reason: string) =>
  freeText(reason, ControlRequest.shape.reason.unwrap().maxLength!);
export const goalText = (goal: string) => freeText(goal, Goal.maxLength!);

/** A pairing request's names, sent by a CLI before anyone approved it, shown to the person who decides. */
export function pairingText(req: PairingStart): PairingStart {
  const { machine, user, client } = PairingStart.shape;
  return {
    ...req,
    machine: freeText(req.machine, machine.maxLength!),
    user: freeText(req.user, user.maxLength!),
    client: req.client === undefined ? undefined : freeText(req.client, client.unwrap().maxLength!),
  };
}

export function checkpointText(req: CheckpointRequest): CheckpointRequest {
  return { ...req, summary: freeText(req.summary, BOUNDS.summaryChars), usage: usage(req.usage) };
}

/**
 * A shell-write report's command, as the peers it wrote over and the Control Room read it: redacted,
 * bounded, and with no control character but tab and line break, no direction override and no lone
 * surrogate (the databases refuse some of them). Null when there is none, or nothing is left.
 */
export function shellCommandText(command: string | undefined): string | null {
  if (command === undefined) return null;
  const text = freeText(command, BOUNDS.caughtCommandChars)
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .replace(/[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ")
    .trim();
  return text || null;
}
