import { z } from "zod";
import { BOUNDS } from "./bounds.js";
import { ERRORS } from "./errors.js";
import { AgentRequest, PollRequest } from "./requests.js";
import { RESPONSES, ScopeRefusal } from "./responses.js";
import { Notice, NOTICE_KINDS, Packet } from "./packets.js";
import { REQUEST_RELEASE_COMMAND, SCOPE_COMMAND, SCOPE_QUEUE_COMMAND } from "./scope-commands.js";

const BOUND_NOTES: Record<keyof typeof BOUNDS, string> = {
  bodyBytes: "raw body of POST /api/agent, in bytes",
  promptChars: "a published prompt",
  intentChars: "a structured intent, serialized as JSON",
  objectiveChars: "an intent's objective",
  stepChars: "one plan step or blocker",
  planItems: "plan steps; blockers",
  nameChars: "one name in components, outputs, dependsOn, deferred, requires, capabilities",
  nameItems: "names in each of those lists",
  summaryChars: "a checkpoint summary",
  paths: "paths in one publish, scope or checkpoint",
  pathChars: "one path or glob",
  identityChars: "clientName, model, usage source",
  sessionChars: "the x-cohent-session header",
  idChars: "ids such as wki_…, pkt_…",
  packetPeers: "active intents a publish packet lists",
  pollEvents: "changes one poll packet carries (the cursor then resumes after the last one)",
  waitSeconds: "the longest long-poll, `x-cohent-wait: <seconds>` on GET /api/agent",
  scopeWaitSeconds: "the longest `scope --wait <seconds>` (CLI and agent CLI)",
  releaseNoteChars: "a release request's note",
  releaseRequestsPerMinute: "release requests one session may send per minute (then `RATE_LIMITED`)",
  packetNotices: "notices one packet carries (the rest come in the next)",
};

/** docs/protocol.md, generated from the schemas so that it cannot drift (a test compares). */
export function protocolDoc(): string {
  const lines = [
    "# Cohent protocol v1 (generated)",
    "",
    "Generated from `protocol/src` by `npm run docs`; `npm test` fails when this file is stale.",
    "",
    "## Bounds",
    "",
    "| bound | value | applies to |",
    "| --- | --- | --- |",
    ...Object.entries(BOUNDS).map(
      ([k, v]) => `| \`${k}\` | ${v} | ${BOUND_NOTES[k as keyof typeof BOUNDS]} |`,
    ),
    "",
    "Packet `tokens` is `ceil(chars / 4)`, an approximation that is stated, never billed.",
    "",
    "## Error codes",
    "",
    "| code | HTTP | retryable | meaning |",
    "| --- | --- | --- | --- |",
    ...Object.entries(ERRORS).map(([k, v]) => `| \`${k}\` | ${v.status} | ${v.retryable} | ${v.message} |`),
    "",
    "## POST /api/agent request (JSON Schema)",
    "",
    "```json",
    JSON.stringify(z.toJSONSchema(AgentRequest, { io: "input" }), null, 2),
    "```",
    "",
    "## Headers of every agent call",
    "",
    "`Authorization: Bearer <token>` and `x-cohent-session: <client session id>` (letters, digits and `. _ : -`, at most",
    "128). A call made for a sub-agent (Claude Code's `agent_id`) also sends `x-cohent-agent: <agent id>` in the same form:",
    "its work is the parent session's, and the guard catches it causes are recorded with that id.",
    "",
    "## GET /api/agent (poll) headers",
    "",
    "`x-cohent-intent` and `x-cohent-cursor` map to:",
    "",
    "```json",
    JSON.stringify(z.toJSONSchema(PollRequest, { io: "input" }), null, 2),
    "```",
    "",
    `\`x-cohent-wait: <seconds>\` (0 to ${BOUNDS.waitSeconds}) makes the poll a long-poll: it answers as soon as something concerning the intent`,
    "or the session's control changes after the cursor, else with the empty answer when the time is up. Beyond the bound: `INVALID_WAIT`.",
    "",
    "## Response `data` by operation",
    "",
    "Every response is a v1 envelope: `{version: 1, ok, operation, data | error{code, message, retryable, details?}, warnings, meta}`;",
    "`meta.session` carries `{id, control, controlReason, leaseExpiresAt}` on every authenticated answer. The full schemas are",
    "`RESPONSES` in `protocol/src/responses.ts`; the `agent schema` command prints them as JSON Schema.",
    "",
    "| operation | data fields |",
    "| --- | --- |",
    ...Object.entries(RESPONSES).map(
      ([op, schema]) =>
        `| ${op} | ${Object.keys(schema.shape)
          .map((k) => `\`${k}\``)
          .join(", ")} |`,
    ),
    "",
    "A packet has: " +
      Object.keys(Packet.shape)
        .map((k) => `\`${k}\``)
        .join(", ") +
      ".",
    "",
    "## Claim queue, release requests and notices",
    "",
    '`scope` with `"queue": true` that collides is refused `SCOPE_CONFLICT` as usual, and also joins the repository\'s',
    "claim queue (first come, first served; one entry per intent; the same paths again keep their place). Its `details`:",
    "",
    "```json",
    JSON.stringify(z.toJSONSchema(ScopeRefusal), null, 2),
    "```",
    "",
    "After every release (a narrower or empty scope, a completed or abandoned checkpoint, a superseded intent, a lease",
    "expiry, a cancelled session, a person's release) the queue is walked in order and a waiter is granted when its paths",
    "overlap no other intent's claim and no earlier waiter still waiting. A plain claim on paths free right now is granted",
    "even when a waiter wants them too. A waiter leaves the queue on any successful claim of its intent (`scope` with no",
    "paths included), when its intent closes, its session is cancelled or its lease expires.",
    "",
    "`release-request` asks every peer whose claim overlaps `paths` to let go (`NOT_HELD` when none does); each holder",
    `gets a notice with the note (redacted, at most ${BOUNDS.releaseNoteChars} characters, untrusted) and the commands to act.`,
    `At most ${BOUNDS.releaseRequestsPerMinute} per session per minute, then \`429 RATE_LIMITED\` with \`Retry-After\`.`,
    "",
    `Notices (\`${NOTICE_KINDS.join("`, `")}\`) are told once, in the intent's next packet of any kind (at most`,
    `${BOUNDS.packetNotices}, oldest first); their \`text\` lines open \`packet.text\`. \`GET /api/agent/session\` answers \`notices\`,`,
    "the count not yet told to the session's intents, and a poll answers a packet while any is untold.",
    "",
    "```json",
    JSON.stringify(z.toJSONSchema(Notice), null, 2),
    "```",
    "",
    "The commands a notice quotes: narrow a claim with",
    `\`${SCOPE_COMMAND} <the paths it keeps…>\`, release it with \`${SCOPE_COMMAND}\` (no paths), queue with`,
    `\`${SCOPE_QUEUE_COMMAND} <paths…>\`, ask holders with \`${REQUEST_RELEASE_COMMAND} <paths…>\`.`,
    "",
  ];
  return lines.join("\n");
}
