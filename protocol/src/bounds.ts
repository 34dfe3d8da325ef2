/**
 * Every bound of the protocol, in one place. docs/configuration.md's "Path bounds"
 * states them; test/unit/paths.test.ts checks it against this object.
 */
export const BOUNDS = {
  /** Raw request body accepted by the HTTP transport. */
  bodyBytes: 64 * 1024,
  /** A published prompt, in characters. Longer prompts are rejected, not cut. */
  promptChars: 16_000,
  /** A structured intent, serialized as JSON, in characters. */
  intentChars: 4_096,
  /** Objective and summary-like single strings. */
  objectiveChars: 240,
  /** One plan step, one blocker. */
  stepChars: 240,
  /** Plan steps, blockers. */
  planItems: 12,
  /** Names in components, outputs, dependsOn, deferred, requires, capabilities. */
  nameChars: 64,
  nameItems: 16,
  /** A checkpoint summary. */
  summaryChars: 1_000,
  /** Paths in one publish, scope or checkpoint. */
  paths: 64,
  /** One path or glob, in characters. */
  pathChars: 512,
  /** One glob's cost in matcher states (path-cost.ts: the cost model); a plain path costs nothing. */
  pathCost: 128,
  /** All patterns of one request (or one stored claim) together, in matcher states. */
  pathsCost: 512,
  /** Matching steps one request may spend comparing its paths with the room's claims; past it, unsure means overlap. */
  matchSteps: 100_000,
  /** Client and model identity strings. */
  identityChars: 64,
  /** The x-cohent-session header. */
  sessionChars: 128,
  /** Ids such as wki_…, pkt_…. */
  idChars: 64,
  /** Active intents a publish packet lists. */
  packetPeers: 3,
  /** Events one poll packet carries at most; the cursor advances past them. */
  pollEvents: 50,
  /** The longest long-poll an agent may ask for with x-cohent-wait, in seconds. */
  waitSeconds: 30,
  /** The longest `scope --wait` (CLI, agent CLI), in seconds; it long-polls in steps of waitSeconds. */
  scopeWaitSeconds: 120,
  /** A release request's note, in characters. */
  releaseNoteChars: 280,
  /** Release requests one session may send per minute. */
  releaseRequestsPerMinute: 6,
  /** Notices one packet carries at most; the rest wait for the next packet. */
  packetNotices: 10,
  /** Modified files one guard-wiring report lists at most. */
  wiringChanges: 32,
  /** What changed in one file of the guard's wiring, as one short phrase ("hook entry PreToolUse removed"). */
  wiringPhraseChars: 80,
  /** The name of the guard's rule a refusal report carries (`guard`, `rule`: "uncertain-write-held"). */
  ruleNameChars: 40,
  /** Checkouts one token may have reported as "guard wiring modified" at once. */
  wiringCheckouts: 16,
  /** The shell command a shell-write report quotes (`guard`, kind `shell-write`), in characters; longer is rejected, the adapter cuts it. */
  caughtCommandChars: 2_000,
  /** Peer intents one shell-write report names. */
  caughtPeers: 20,
  /** Shell-write reports one session may send per minute: each puts notices into peers' packets. */
  shellWriteReportsPerMinute: 12,
  /** The client's version a hook reports (x-cohent-host `version=`). */
  hostVersionChars: 64,
} as const;

/** The long-poll header of GET /api/agent: wait up to this many seconds for a change after the cursor (zod-free here: the adapter sends it). */
export const WAIT_HEADER = "x-cohent-wait";

/**
 * The request id of a write (POST /api/agent): the client draws one per logical write and sends it again on
 * each retry of that write; the service runs a token's id once and answers every retry with the first answer
 * (zod-free here: the adapter sends it). An HTTP header, so that every operation's body stays as it is.
 */
export const REQUEST_ID_HEADER = "idempotency-key";
/** A request id: 16 to 128 letters, digits and . _ : - (a UUID fits). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{16,128}$/;
/**
 * The POST /api/agent types that write, and so take a request id: a read runs again at no cost, and
 * `ack` is once by itself (a second is PACKET_ALREADY_ACKED), so it does not pay for the record (the
 * repository's lock, taken first by every write with a request id).
 */
export const REQUEST_ID_TYPES = [
  "publish",
  "intent",
  "scope",
  "checkpoint",
  "guard",
  "release-request",
] as const;
/** How long the service keeps a request id's first answer, in hours: a retry later than this runs again. */
export const REQUEST_ID_RETENTION_HOURS = 24;

/** Approximate tokens of a text: one token per four characters, rounded up. */
export function approxTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
