import { z } from "zod";
import { PROTOCOL_VERSION } from "./envelope-build.js";
import { ErrorCodeSchema } from "./errors.js";

export { PROTOCOL_VERSION, success, fail, failure, failFrom, withProtocolFlags } from "./envelope-build.js";

export const ErrorBody = z.strictObject({
  code: ErrorCodeSchema,
  message: z.string(),
  retryable: z.boolean(),
  details: z.unknown().optional(),
});

export const SessionMeta = z.strictObject({
  id: z.string(),
  control: z.enum(["active", "paused", "cancelled"]),
  controlReason: z.string().nullable(),
  leaseExpiresAt: z.string(),
  /** The lease epoch: it moves when the session's claims were freed without it asking; drop what you thought you held. */
  epoch: z.number().int().optional(),
});

export const Meta = z
  .object({
    serverTime: z.string().optional(),
    /** The server's version (protocol/src/version.ts) and the oldest adapter version it accepts. */
    serverVersion: z.string().optional(),
    minAdapterVersion: z.string().optional(),
    session: SessionMeta.optional(),
  })
  .catchall(z.unknown());

export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.strictObject({
    version: z.literal(PROTOCOL_VERSION),
    ok: z.literal(true),
    operation: z.string(),
    data,
    warnings: z.array(z.string()),
    meta: Meta,
  });
}

export const FailureEnvelope = z.strictObject({
  version: z.literal(PROTOCOL_VERSION),
  ok: z.literal(false),
  operation: z.string(),
  error: ErrorBody,
  warnings: z.array(z.string()),
  meta: Meta,
});

/** One permissive envelope for both outcomes (MCP output schemas need this). */
export const AnyEnvelope = z.object({
  version: z.literal(PROTOCOL_VERSION),
  ok: z.boolean(),
  operation: z.string(),
  data: z.unknown().optional(),
  error: ErrorBody.optional(),
  warnings: z.array(z.string()),
  meta: Meta,
});

export type FailureEnvelope = z.infer<typeof FailureEnvelope>;
export type Meta = z.infer<typeof Meta>;
export interface SuccessEnvelope<T> {
  version: 1;
  ok: true;
  operation: string;
  data: T;
  warnings: string[];
  meta: Meta;
}
export type Envelope<T> = SuccessEnvelope<T> | FailureEnvelope;
