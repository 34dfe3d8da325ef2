import { z } from "zod";
import { ACTIONS } from "./actions.js";
import { IntentRecord, IntentState } from "./intent.js";

/** The resolver's answers, plus `plan` for a prompt with no structured intent yet. */
export const Action = z.enum(ACTIONS);
export type Action = z.infer<typeof Action>;

export const Guard = z.enum(["calling-in", "silent", "expired"]);
export type Guard = z.infer<typeof Guard>;
export const Control = z.enum(["active", "paused", "cancelled"]);
export type Control = z.infer<typeof Control>;

/** What a peer sees of another work intent. Prompt and summary are untrusted text. */
export const PeerView = z.strictObject({
  intentId: z.string(),
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
  prompt: z.string(),
  state: z.union([IntentState, z.literal("plan"), z.literal("superseded")]),
  intent: IntentRecord.nullable(),
  scope: z.array(z.string()),
  lastCheckpoint: z.strictObject({ status: z.string(), summary: z.string(), at: z.string() }).nullable(),
  guard: Guard,
  updatedAt: z.string(),
});
export type PeerView = z.infer<typeof PeerView>;

export const Decision = z.strictObject({
  id: z.string(),
  intentId: z.string(),
  action: Action,
  peerIds: z.array(z.string()),
  reason: z.string(),
  at: z.string(),
});
export type Decision = z.infer<typeof Decision>;

export const Change = z.strictObject({
  cursor: z.string(),
  kind: z.string(),
  intentId: z.string(),
  summary: z.string(),
  at: z.string(),
});
export type Change = z.infer<typeof Change>;

/** Who a notice is about: another intent's holder or waiter, or a person in the Control Room. */
export const NoticePeer = z.strictObject({
  intentId: z.string().nullable(),
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
});
export type NoticePeer = z.infer<typeof NoticePeer>;

/**
 * Something that happened to this intent's claim, told once in its next
 * packet (any kind), ahead of everything else the packet says:
 * - `scope-granted`: a queued claim was granted; `paths` are now its scope.
 * - `scope-waiter`: `peer` queued behind this intent's claim on `paths`; `queueLength` waiters in all.
 * - `release-requested`: `peer` asks this intent to release `paths`; `note` is their untrusted text.
 * - `scope-lost`: this intent's claim on `paths` was freed without it asking; `reason` says why.
 * - `queue-left`: this intent left the queue for `paths` (`reason`).
 * - `shell-write`: `peer` changed this intent's claimed `paths` through a shell (or opaque MCP) call, caught
 *   after the call; `note` is its command (untrusted text), `reason` is a ShellWriteReason: whether the
 *   writer's checkout kept the bytes from before.
 * - `restore-requested`: `peer`, a person in the Control Room, asks this intent's checkout to put `paths`
 *   back as they were before its caught shell write; the adapter does it as the packet arrives.
 */
export const NOTICE_KINDS = [
  "scope-granted",
  "scope-waiter",
  "release-requested",
  "scope-lost",
  "queue-left",
  "shell-write",
  "restore-requested",
] as const;
export const NoticeKind = z.enum(NOTICE_KINDS);
export type NoticeKind = z.infer<typeof NoticeKind>;
export const LostReason = z.enum(["lease-expired", "released-by-person", "session-cancelled"]);
export type LostReason = z.infer<typeof LostReason>;
/** Whether the writer's checkout kept the bytes; `between-…`: noticed between calls, the writer unknown. */
export const ShellWriteReason = z.enum([
  "restorable",
  "not-restorable",
  "between-restorable",
  "between-not-restorable",
]);
export type ShellWriteReason = z.infer<typeof ShellWriteReason>;
export const Notice = z.strictObject({
  id: z.string(),
  kind: NoticeKind,
  paths: z.array(z.string()),
  peer: NoticePeer.nullable(),
  /** Untrusted peer text (a release request's note, a shell write's command), redacted and bounded. */
  note: z.string().nullable(),
  reason: z.string().nullable(),
  queueLength: z.number().int().nullable(),
  at: z.string(),
  /** The rendered line, with the exact commands to act on it. Part of the packet's `text`. */
  text: z.string(),
});
export type Notice = z.infer<typeof Notice>;

/**
 * A coordination packet: what the adapter injects into the agent's context.
 * `text` is the rendered form; `chars` is its length and `tokens` is
 * ceil(chars / 4). The structured parts are there for machine callers.
 */
export const Packet = z.strictObject({
  id: z.string(),
  kind: z.enum(["plan", "intent", "scope", "checkpoint", "poll", "context"]),
  intentId: z.string(),
  action: Action,
  cursor: z.string(),
  peerIds: z.array(z.string()),
  chars: z.number().int(),
  tokens: z.number().int(),
  text: z.string(),
  goal: z.string().nullable().optional(),
  peers: z.array(PeerView),
  decisions: z.array(Decision),
  changes: z.array(Change),
  completed: z.array(PeerView).optional(),
  /** Notices for this intent not told before; their lines open `text`. */
  notices: z.array(Notice).optional(),
});
export type Packet = z.infer<typeof Packet>;
