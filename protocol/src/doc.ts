import { z } from "zod";
import { BOUNDS } from "./bounds.js";
import { ERRORS } from "./errors.js";
import { AgentRequest, PollRequest } from "./requests.js";
import { RESPONSES } from "./responses.js";
import { Packet } from "./packets.js";

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
  ];
  return lines.join("\n");
}
