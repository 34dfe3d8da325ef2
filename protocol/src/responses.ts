import { z } from "zod";
import { Action, Control, Decision, Guard, Packet, PeerView } from "./packets.js";
import { CheckpointStatus } from "./requests.js";

/** The `data` of each successful operation. */
export const PublishResponse = z.strictObject({
  intentId: z.string(),
  action: Action,
  packet: Packet,
});

export const IntentResponse = z.strictObject({
  intentId: z.string(),
  action: Action,
  peerIds: z.array(z.string()),
  reason: z.string(),
  packet: Packet,
});

/** Whose intent a peer's claim belongs to, as a scope answer names it. */
const peerIntent = {
  intentId: z.string(),
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
};

export const ScopeConflict = z.strictObject({
  ...peerIntent,
  objective: z.string().nullable(),
  paths: z.array(z.string()),
  theirPaths: z.array(z.string()),
});
export type ScopeConflict = z.infer<typeof ScopeConflict>;

/** Where a queued claim stands: `place` 1 is next; `behind` are the holders and earlier waiters it waits for. */
export const QueuePlace = z.strictObject({
  paths: z.array(z.string()),
  place: z.number().int().min(1),
  behind: z.array(z.strictObject({ ...peerIntent, paths: z.array(z.string()), holds: z.boolean() })),
  since: z.string(),
});
export type QueuePlace = z.infer<typeof QueuePlace>;

/** The `details` of a SCOPE_CONFLICT error: the conflicts, and the queue place when the request asked to queue. */
export const ScopeRefusal = z.strictObject({
  conflicts: z.array(ScopeConflict),
  queued: QueuePlace.nullable().optional(),
});
export type ScopeRefusal = z.infer<typeof ScopeRefusal>;

export const ScopeResponse = z.strictObject({
  intentId: z.string(),
  paths: z.array(z.string()),
  replaced: z.array(z.string()),
  packet: Packet,
});

export const CheckpointResponse = z.strictObject({
  intentId: z.string(),
  status: CheckpointStatus,
  paths: z.array(z.string()).nullable(),
  /** Present when the checkpoint records a commit. */
  commit: z.string().optional(),
  packet: Packet,
});

/** `commit` (adapter, agent CLI, MCP): the commit made of the intent's own paths, and its checkpoint. */
export const CommitResponse = z.strictObject({
  intentId: z.string(),
  hash: z.string(),
  paths: z.array(z.string()),
  /** Changed paths in peers' scopes, left as they were. */
  leftForPeers: z.array(
    z.strictObject({ intentId: z.string(), person: z.string(), paths: z.array(z.string()) }),
  ),
  /** Changed paths outside every scope, not committed unless listed. */
  unclaimed: z.array(z.string()),
  /** Whether the service recorded the commit as a checkpoint of the intent. */
  recorded: z.boolean(),
});

export const AckResponse = z.strictObject({
  packetId: z.string(),
  chars: z.number().int(),
});

export const PollResponse = z.strictObject({
  cursor: z.string(),
  control: Control,
  packet: Packet.nullable(),
});

export const ContextResponse = z.strictObject({
  goal: z.string().nullable(),
  intentId: z.string().nullable(),
  action: Action.nullable(),
  decision: Decision.nullable(),
  peers: z.array(PeerView),
  cursor: z.string(),
  packet: Packet,
});

export const GuardResponse = z.strictObject({
  recorded: z.boolean(),
});

export const StatusResponse = z.strictObject({
  person: z.string(),
  intents: z.array(
    z.strictObject({
      intentId: z.string(),
      sessionKey: z.string(),
      client: z.string().nullable(),
      model: z.string().nullable(),
      state: z.string(),
      action: Action,
      guard: Guard,
      control: Control,
      lastCallAt: z.string(),
      objective: z.string().nullable(),
      scope: z.array(z.string()),
    }),
  ),
});

/** Every other live intent's claimed paths (not this session's own intents; no packet, no resolver run). */
export const ScopesResponse = z.strictObject({
  peers: z.array(
    z.strictObject({
      ...peerIntent,
      /** The intent's objective (redacted when stored), for a refusal that names the holder. */
      objective: z.string().nullable().optional(),
      paths: z.array(z.string()),
    }),
  ),
});

/** The holders a release request reached, each with the paths asked of it. */
export const ReleaseRequestResponse = z.strictObject({
  intentId: z.string(),
  asked: z.array(z.strictObject({ ...peerIntent, paths: z.array(z.string()) })),
});

/** GET /api/agent/session: the kill-switch read. Renews the lease; no resolver run, no event scan. */
export const SessionResponse = z.strictObject({
  control: Control,
  controlReason: z.string().nullable(),
  /** Notices not yet told to this session's intents: when non-zero, the hook polls and injects them first. */
  notices: z.number().int().nonnegative().default(0),
});

export const RESPONSES = {
  publish: PublishResponse,
  intent: IntentResponse,
  scope: ScopeResponse,
  checkpoint: CheckpointResponse,
  ack: AckResponse,
  poll: PollResponse,
  context: ContextResponse,
  guard: GuardResponse,
  status: StatusResponse,
  scopes: ScopesResponse,
  session: SessionResponse,
  "release-request": ReleaseRequestResponse,
} as const;

export type PublishResponse = z.infer<typeof PublishResponse>;
export type IntentResponse = z.infer<typeof IntentResponse>;
export type ScopeResponse = z.infer<typeof ScopeResponse>;
export type CheckpointResponse = z.infer<typeof CheckpointResponse>;
export type CommitResponse = z.infer<typeof CommitResponse>;
export type AckResponse = z.infer<typeof AckResponse>;
export type PollResponse = z.infer<typeof PollResponse>;
export type ContextResponse = z.infer<typeof ContextResponse>;
export type GuardResponse = z.infer<typeof GuardResponse>;
export type StatusResponse = z.infer<typeof StatusResponse>;
export type SessionResponse = z.infer<typeof SessionResponse>;
export type ScopesResponse = z.infer<typeof ScopesResponse>;
export type ReleaseRequestResponse = z.infer<typeof ReleaseRequestResponse>;
