import { ClientError, fail, failFrom, ok, type Envelope } from "./envelope.js";
import * as client from "./client.js";
import { readRuntime } from "./runtime.js";

/**
 * The agent-facing commands (intent, scope, checkpoint, context) as one
 * function from arguments to an envelope and an exit code. Whoever runs it
 * — the CLI process itself, or the PreToolUse hook relaying for a
 * sandboxed shell — gets the same answer; rendering is separate.
 */

export const RELAYED = new Set(["intent", "scope", "checkpoint", "context"]);

export interface Outcome {
  envelope: Envelope;
  exitCode: number;
}

/** Positional arguments, without the output flags. */
export function positionals(args: readonly string[]): string[] {
  return args.filter((a) => a !== "--json" && a !== "--human");
}

const CHECKPOINT_STATUSES = new Set(["working", "blocked", "completed", "abandoned"]);
const REPLAN = new Set(["wait", "duplicate", "handoff"]);

export async function execute(name: string, rawArgs: readonly string[], root: string, sessionId: string): Promise<Outcome> {
  const args = positionals(rawArgs);
  let checkout: client.Checkout;
  try {
    checkout = client.openCheckout(root);
  } catch (err) {
    return { envelope: failFrom(name, err), exitCode: 1 };
  }
  try {
    const envelope = await run(name, args, checkout, sessionId);
    if (!envelope.ok) return { envelope, exitCode: 1 };
    const action = envelope.data?.action;
    return { envelope, exitCode: name === "intent" && REPLAN.has(action) ? 2 : 0 };
  } catch (err) {
    return { envelope: failFrom(name, err), exitCode: 1 };
  }
}

async function run(name: string, args: string[], c: client.Checkout, sessionId: string): Promise<Envelope> {
  switch (name) {
    case "intent": {
      if (args.length !== 1) throw new ClientError("INVALID_INPUT", `usage: node .cohent/cohent.mjs intent '{"objective":"…","outputs":["…"],…}'`);
      let record: unknown;
      try {
        record = JSON.parse(args[0]!);
      } catch {
        throw new ClientError("INVALID_INPUT", "The intent is not valid JSON; pass one JSON object in single quotes.");
      }
      if (!record || typeof record !== "object" || Array.isArray(record)) throw new ClientError("INVALID_INPUT", "The intent must be a JSON object.");
      return client.intent(c, sessionId, record as Record<string, unknown>);
    }
    case "scope": {
      const paths = client.normalizeAll(c.root, args);
      const previous = client.sessionState(c.root, sessionId).scope;
      const env = await client.claim(c, sessionId, paths, true);
      if (!env.ok && env.error?.code === "SCOPE_CONFLICT") {
        env.error.details = { ...(env.error.details as object), previousScope: previous };
      }
      return env;
    }
    case "checkpoint": {
      const [status, ...summary] = args;
      if (!status || !CHECKPOINT_STATUSES.has(status)) {
        throw new ClientError("INVALID_INPUT", "usage: node .cohent/cohent.mjs checkpoint <working|blocked|completed|abandoned> <summary>");
      }
      return client.checkpoint(c, sessionId, { status, summary: summary.join(" ") });
    }
    case "context":
      return client.context(c, sessionId);
    default:
      throw new ClientError("INVALID_INPUT", `unknown command ${name}`);
  }
}

/** The packet an outcome shows the agent, for the acknowledgement of injected characters. */
export function shownPacket(env: Envelope): { id: string; text: string } | null {
  const p = env.ok ? env.data?.packet : null;
  return p && typeof p.id === "string" && typeof p.text === "string" ? { id: p.id, text: p.text } : null;
}

function who(c: { person: string; client: string | null; model: string | null }): string {
  return [c.person, [c.client, c.model].filter(Boolean).join(" ")].filter(Boolean).join(" (") + (c.client || c.model ? ")" : "");
}

const GUIDANCE: Record<string, string> = {
  plan: "Publish a structured intent before editing.",
  wait: "Wait: a dependency is still being produced. Replan: publish a narrower intent that does not need it, or wait for it.",
  duplicate: "Duplicate: another agent already owns this objective and output. Replan: publish a narrower or different intent.",
  handoff: "Handoff: an active peer reports a capability this work requires. Replan: publish a narrower intent or hand this part over.",
  parallel: "Parallel: keep to your own outputs; the shared component is someone else's too.",
  proceed: "Proceed.",
};

/** Human rendering: what an agent or a person reads on stdout. */
export function renderHuman(name: string, env: Envelope): string {
  if (!env.ok) {
    const e = env.error!;
    if (e.code === "SCOPE_CONFLICT") {
      const d = (e.details ?? {}) as { conflicts?: { intentId: string; person: string; client: string | null; model: string | null; objective: string | null; paths: string[]; theirPaths: string[] }[]; previousScope?: string[] };
      const lines = ["Scope refused: it overlaps an active peer's scope."];
      for (const c of d.conflicts ?? []) {
        lines.push(`- ${c.paths.join(", ")} overlaps ${who(c)} on ${c.theirPaths.join(", ")}${c.objective ? ` — working on ${JSON.stringify(c.objective)}` : ""} (${c.intentId})`);
      }
      const prev = d.previousScope ?? [];
      lines.push(`A scope replaces your previous claim rather than adding to it; your previous claim (${prev.length ? prev.join(", ") : "none"}) stays as it was.`);
      lines.push("Declare a narrower scope that avoids those paths, or coordinate with that person.");
      return lines.join("\n");
    }
    return `cohent ${name}: ${e.code}: ${e.message}`;
  }
  const d = env.data ?? {};
  switch (name) {
    case "intent":
      return `${d.packet?.text ?? ""}\n\n${GUIDANCE[d.action] ?? d.action}`.trim();
    case "scope":
      return d.paths.length
        ? `Scope claimed: ${d.paths.join(", ")}.${d.replaced?.length ? ` It replaces your previous claim (${d.replaced.join(", ")}).` : ""} Edits outside it will be refused.`
        : "Scope released.";
    case "checkpoint":
      return `Checkpoint recorded: ${d.status}.`;
    case "context":
      return d.intentId ? `${d.packet.text}\n\n${GUIDANCE[d.action] ?? d.action}`.trim() : `${d.packet.text}\n\nNo work intent for this session yet: the prompt hook publishes one.`;
    default:
      return JSON.stringify(d, null, 2);
  }
}

/** Which session runs a command that no hook bound: COHENT_SESSION, else the only live session. */
export function pickSession(root: string): { sessionId: string } | { envelope: Envelope } {
  const named = process.env.COHENT_SESSION?.trim();
  if (named) return { sessionId: named };
  const rt = readRuntime(root);
  const live = Object.entries(rt.sessions).filter(([, s]) => !s.endedAt && Date.now() - Date.parse(s.seenAt) < 10 * 60_000);
  if (live.length === 1) return { sessionId: live[0]![0] };
  if (live.length === 0) {
    // An instruction-only agent (no hooks) or a person: one stable manual session per user.
    const user = (process.env.USER ?? process.env.USERNAME ?? "user").replace(/[^A-Za-z0-9._-]/g, "-");
    return { sessionId: `cli-${user}` };
  }
  return {
    envelope: fail(
      "session",
      "INVALID_INPUT",
      `${live.length} agent sessions share this checkout and no hook bound this command to one of them. Run it through the agent's shell tool (its PreToolUse hook binds it), or prefix COHENT_SESSION=<session id>: ${live.map(([id]) => id).join(", ")}.`,
    ),
  };
}
