import { GUIDANCE, INTENT_COMMAND, isReplan, type ActionName } from "@cohent/protocol/actions";
import { CohentError } from "@cohent/protocol/codes";
import type { Envelope } from "@cohent/protocol";
import { failFrom } from "./envelope.js";
import { describeConflicts } from "./guard.js";
import type { Inputs, Operation } from "./operations.js";

/**
 * The human CLI transport (intent, scope, checkpoint, context, commit): arguments to
 * an operation's input, and an envelope to text. It parses and renders
 * only; main.ts runs it over the operation layer, and so does the hook when
 * it relays a sandboxed command.
 */

export const HUMAN_COMMANDS: ReadonlySet<string> = new Set([
  "intent",
  "scope",
  "checkpoint",
  "context",
  "commit",
]);

export const COMMIT_USAGE = "usage: node .cohent/cohent.mjs commit -m <message> [--path <unclaimed path>…]";

/** `commit -m <message> [-m <paragraph>…] [--path <p>…]`, as git joins several -m: paragraphs. */
function parseCommit(args: readonly string[]): Inputs["commit"] {
  const messages: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] =
      a.startsWith("--") && a.includes("=")
        ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
        : [a, undefined];
    const value = inline ?? args[++i];
    if (value === undefined || !["-m", "--message", "--path"].includes(flag!))
      throw new CohentError("INVALID_INPUT", COMMIT_USAGE);
    (flag === "--path" ? paths : messages).push(value);
  }
  if (messages.length === 0 || messages.join("").trim() === "")
    throw new CohentError("INVALID_INPUT", `A commit message is required. ${COMMIT_USAGE}`);
  return { message: messages.join("\n\n"), ...(paths.length ? { paths } : {}) };
}

/** Positional arguments, without the output flags. */
export function positionals(args: readonly string[]): string[] {
  return args.filter((a) => a !== "--json" && a !== "--human");
}

const STATUSES = new Set(["working", "blocked", "completed", "abandoned"]);

/** A human command's arguments as the operation's input; a bad one throws INVALID_INPUT. */
export function parseHuman(
  name: string,
  rawArgs: readonly string[],
): { op: Operation; input: Inputs[Operation] } {
  const args = positionals(rawArgs);
  switch (name) {
    case "intent": {
      if (args.length !== 1) throw new CohentError("INVALID_INPUT", `usage: ${INTENT_COMMAND}`);
      let record: unknown;
      try {
        record = JSON.parse(args[0]!);
      } catch {
        throw new CohentError(
          "INVALID_INPUT",
          "The intent is not valid JSON; pass one JSON object in single quotes.",
        );
      }
      if (!record || typeof record !== "object" || Array.isArray(record))
        throw new CohentError("INVALID_INPUT", "The intent must be a JSON object.");
      return { op: "intent", input: { intent: record as Record<string, unknown> } };
    }
    case "scope":
      return { op: "scope", input: { paths: args } };
    case "checkpoint": {
      const [status, ...summary] = args;
      if (!status || !STATUSES.has(status))
        throw new CohentError(
          "INVALID_INPUT",
          "usage: node .cohent/cohent.mjs checkpoint <working|blocked|completed|abandoned> <summary>",
        );
      return {
        op: "checkpoint",
        input: { status: status as Inputs["checkpoint"]["status"], summary: summary.join(" ") },
      };
    }
    case "context":
      return { op: "context", input: {} };
    case "commit":
      return { op: "commit", input: parseCommit(args) };
    default:
      throw new CohentError("INVALID_INPUT", `unknown command ${name}`);
  }
}

/** The parse step as an envelope, for the callers that render failures rather than catch them. */
export function tryParseHuman(
  name: string,
  args: readonly string[],
): { op: Operation; input: Inputs[Operation] } | Envelope<never> {
  try {
    return parseHuman(name, args);
  } catch (err) {
    return failFrom(name, err);
  }
}

/** 0 ok, 1 failed, 2 when `intent` must replan (wait, duplicate, handoff). */
export function exitCodeOf(name: string, env: Envelope<any>): number {
  if (!env.ok) return 1;
  return name === "intent" && isReplan(env.data?.action) ? 2 : 0;
}

const advice = (action: string) =>
  `${isReplan(action) ? "Replan: " : ""}${GUIDANCE[action as ActionName] ?? action}`;

/** Human rendering: what an agent or a person reads. */
export function renderHuman(name: string, env: Envelope<any>): string {
  if (!env.ok) {
    const e = env.error;
    if (e.code !== "SCOPE_CONFLICT" || name === "commit") return `cohent ${name}: ${e.code}: ${e.message}`;
    const prev = (e.details as { previousScope?: string[] } | undefined)?.previousScope ?? [];
    return [
      "Scope refused: it overlaps an active peer's scope.",
      ...describeConflicts(e.details).map((line) => `- ${line}`),
      `A scope replaces your previous claim rather than adding to it; your previous claim (${prev.length ? prev.join(", ") : "none"}) stays as it was.`,
      "Declare a narrower scope that avoids those paths, or coordinate with that person.",
    ].join("\n");
  }
  const d = env.data ?? {};
  switch (name) {
    case "intent":
      return `${d.packet?.text ?? ""}\n\n${advice(d.action)}`.trim();
    case "scope":
      return d.paths.length
        ? `Scope claimed: ${d.paths.join(", ")}.${d.replaced?.length ? ` It replaces your previous claim (${d.replaced.join(", ")}).` : ""} Edits outside it will be refused.`
        : "Scope released.";
    case "checkpoint":
      return `Checkpoint recorded: ${d.status}.`;
    case "commit": {
      const peers = (d.leftForPeers as { person: string; intentId: string; paths: string[] }[]).map(
        (p) => `${p.paths.join(", ")} (${p.person}, ${p.intentId})`,
      );
      return [
        `Committed ${d.hash}: ${d.paths.join(", ")}.`,
        ...(peers.length ? [`Left as they were, in peers' scopes: ${peers.join("; ")}.`] : []),
        ...(d.unclaimed.length
          ? [
              `Not committed, outside every scope: ${d.unclaimed.join(", ")} (add --path <p> for those that are yours).`,
            ]
          : []),
        ...(d.recorded ? [] : env.warnings),
      ].join("\n");
    }
    case "context":
      return d.intentId
        ? `${d.packet.text}\n\n${advice(d.action)}`.trim()
        : `${d.packet.text}\n\nNo work intent for this session yet: the prompt hook publishes one.`;
    default:
      return JSON.stringify(d, null, 2);
  }
}
