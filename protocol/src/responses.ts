import { z } from "zod";
import { Action, Control, Packet } from "./packets.js";
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

export const ScopeConflict = z.strictObject({
  intentId: z.string(),
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
  objective: z.string().nullable(),
  paths: z.array(z.string()),
  theirPaths: z.array(z.string()),
});
export type ScopeConflict = z.infer<typeof ScopeConflict>;

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
  packet: Packet,
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

export const RESPONSES = {
  publish: PublishResponse,
  intent: IntentResponse,
  scope: ScopeResponse,
  checkpoint: CheckpointResponse,
  ack: AckResponse,
  poll: PollResponse,
} as const;

export type PublishResponse = z.infer<typeof PublishResponse>;
export type IntentResponse = z.infer<typeof IntentResponse>;
export type ScopeResponse = z.infer<typeof ScopeResponse>;
export type CheckpointResponse = z.infer<typeof CheckpointResponse>;
export type AckResponse = z.infer<typeof AckResponse>;
export type PollResponse = z.infer<typeof PollResponse>;
