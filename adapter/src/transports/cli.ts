import { GUIDANCE, INTENT_COMMAND, isReplan, type ActionName } from "@cohent/protocol/actions";
import { BOUNDS } from "@cohent/protocol/bounds";
import { CohentError } from "@cohent/protocol/codes";
import { REQUEST_RELEASE_COMMAND, SCOPE_COMMAND, SCOPE_QUEUE_COMMAND } from "@cohent/protocol/scope-commands";
import type { Envelope, ReleaseRequestResponse } from "@cohent/protocol";
import {
  queuePlace,
  noticeText,
  failFrom,
  OPERATIONS,
  type Inputs,
  type Operation,
  waitSeconds,
  type WaitOutcome,
} from "@cohent/client";
import { contestedPaths, describeConflicts, describeQueue, queueAdvice } from "../guard/guard.js";

/**
 * The human CLI transport (intent, scope, checkpoint, context, commit, request-release): arguments to
 * an operation's input, and an envelope to text. It parses and renders
 * only; main.ts runs it over the operation layer, and so does the hook when
 * it relays a sandboxed command.
 */

/** Every operation but publish: the prompt reaches the backend through the UserPromptSubmit hook, not a command. */
export const HUMAN_COMMANDS: ReadonlySet<string> = new Set(OPERATIONS.filter((op) => op !== "publish"));

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

export const SCOPE_USAGE = `usage: node .cohent/cohent.mjs scope [--queue | --wait <seconds, 1-${BOUNDS.scopeWaitSeconds}>] <path…>`;
export const RELEASE_USAGE = "usage: node .cohent/cohent.mjs request-release <path…> [--note <text>]";

/** Splits `--flag value` and `--flag=value` off the positionals; `valued` flags take a value, the others none. */
function options(
  args: readonly string[],
  valued: readonly string[],
  bare: readonly string[],
  usage: string,
): { flags: Record<string, string>; rest: string[] } {
  const flags: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("--")) {
      rest.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq === -1 ? a : a.slice(0, eq);
    if (bare.includes(name) && eq === -1) flags[name] = "";
    else if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : a.slice(eq + 1);
      if (value === undefined) throw new CohentError("INVALID_INPUT", `${name} needs a value. ${usage}`);
      flags[name] = value;
    } else throw new CohentError("INVALID_INPUT", `unknown option ${a}. ${usage}`);
  }
  return { flags, rest };
}

/** `scope [--queue | --wait <seconds>] <path…>`. */
function parseScope(args: readonly string[]): Inputs["scope"] {
  const { flags, rest } = options(args, ["--wait"], ["--queue"], SCOPE_USAGE);
  const input: Inputs["scope"] = { paths: rest };
  if ("--queue" in flags) input.queue = true;
  if ("--wait" in flags) {
    const seconds = waitSeconds(flags["--wait"]);
    if (seconds === null)
      throw new CohentError(
        "INVALID_WAIT",
        `--wait takes whole seconds from 1 to ${BOUNDS.scopeWaitSeconds}, not ${JSON.stringify(flags["--wait"])}. ${SCOPE_USAGE}`,
      );
    input.wait = seconds;
  }
  if ((input.queue || input.wait) && rest.length === 0)
    throw new CohentError("INVALID_INPUT", `Name the paths to queue for. ${SCOPE_USAGE}`);
  return input;
}

/** `request-release <path…> [--note <text>]`. */
function parseRelease(args: readonly string[]): Inputs["request-release"] {
  const { flags, rest } = options(args, ["--note"], [], RELEASE_USAGE);
  if (rest.length === 0)
    throw new CohentError("INVALID_INPUT", `Name the paths to ask for. ${RELEASE_USAGE}`);
  const note = flags["--note"] ?? "";
  if (note.length > BOUNDS.releaseNoteChars)
    throw new CohentError(
      "INVALID_INPUT",
      `The note is ${note.length} characters; at most ${BOUNDS.releaseNoteChars}. ${RELEASE_USAGE}`,
    );
  return { paths: rest, ...(note ? { note } : {}) };
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
      // The service validates the record (IntentRecord); the CLI checks only that it is an object.
      return { op: "intent", input: { intent: record as Inputs["intent"]["intent"] } };
    }
    case "scope":
      return { op: "scope", input: parseScope(args) };
    case "request-release":
      return { op: "request-release", input: parseRelease(args) };
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

/** A refused scope: who holds what, the queue place when it queued, and what to do meanwhile. */
function renderScopeRefusal(e: { message: string; details?: unknown }): string {
  const d = (e.details ?? {}) as { previousScope?: string[]; requested?: string[]; wait?: WaitOutcome };
  const prev = d.previousScope ?? [];
  const queued = queuePlace(e.details);
  const lines = [
    queued
      ? d.wait
        ? e.message
        : "Scope not granted yet: it overlaps an active peer's scope, so the claim joined the queue."
      : "Scope refused: it overlaps an active peer's scope.",
    ...describeConflicts(e.details).map((line) => `- ${line}`),
  ];
  if (queued)
    lines.push(
      describeQueue(queued),
      `It is granted the moment those paths are free; a later packet says "granted", and your edits of them then pass. Until then your previous claim (${prev.length ? prev.join(", ") : "none"}) stays as it was.`,
      `Meanwhile, work on files outside ${(contestedPaths(e.details).length ? contestedPaths(e.details) : queued.paths).join(", ")}. To ask the holder to let go: ${REQUEST_RELEASE_COMMAND} <path…> --note '<why>'.`,
    );
  else
    lines.push(
      `A scope replaces your previous claim rather than adding to it; your previous claim (${prev.length ? prev.join(", ") : "none"}) stays as it was.`,
      `Declare a narrower scope that avoids those paths, or: ${queueAdvice(d.requested ?? contestedPaths(e.details), contestedPaths(e.details))}`,
    );
  return lines.join("\n");
}

/** Whom a release request reached. */
function renderRelease(d: ReleaseRequestResponse): string {
  const asked = d.asked.map(
    (a) => `${a.person}${a.client ? ` (${a.client})` : ""} for ${a.paths.join(", ")} (${a.intentId})`,
  );
  return asked.length
    ? `Release requested: asked ${asked.join("; ")}. The note reaches them in their next packet; the answer is theirs. If you queued for the paths (${SCOPE_QUEUE_COMMAND}), a packet says when they are granted to you.`
    : `Release requested, but nobody holds those paths now: claim them with ${SCOPE_COMMAND} <path…>.`;
}

const RELEASE_FAILURE: Record<string, string> = {
  NOT_HELD: `nobody holds any of those paths now, so there is nobody to ask: claim them with ${SCOPE_COMMAND} <path…>.`,
  RATE_LIMITED: `too many release requests: at most ${BOUNDS.releaseRequestsPerMinute} a minute. Ask again later; meanwhile work outside the contested paths, or queue for them with ${SCOPE_QUEUE_COMMAND} <path…>.`,
};

/** Human rendering: what an agent or a person reads. */
export function renderHuman(name: string, env: Envelope<any>): string {
  if (!env.ok) {
    const e = env.error;
    if (name === "request-release" && RELEASE_FAILURE[e.code])
      return `cohent ${name}: ${e.code}: ${RELEASE_FAILURE[e.code]}`;
    if (e.code !== "SCOPE_CONFLICT" || name === "commit") return `cohent ${name}: ${e.code}: ${e.message}`;
    return renderScopeRefusal(e);
  }
  const d = env.data ?? {};
  switch (name) {
    case "intent":
      return `${d.packet?.text ?? ""}\n\n${advice(d.action)}`.trim();
    case "scope": {
      // A notice in the answer (a grant, after --wait) opens it, as it opens the packet.
      const told = noticeText(d.packet?.notices);
      const said = d.paths.length
        ? `Scope claimed: ${d.paths.join(", ")}.${d.replaced?.length ? ` It replaces your previous claim (${d.replaced.join(", ")}).` : ""} Edits outside it will be refused.`
        : "Scope released.";
      return told ? `${told}\n${said}` : said;
    }
    case "request-release":
      return renderRelease(d as ReleaseRequestResponse);
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
