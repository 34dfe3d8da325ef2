import { z } from "zod";
import { ErrorCodeSchema, type CohentError } from "./errors.js";

export const PROTOCOL_VERSION = 1 as const;

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

export function success<T>(
  operation: string,
  data: T,
  meta: Meta = {},
  warnings: string[] = [],
): SuccessEnvelope<T> {
  return { version: PROTOCOL_VERSION, ok: true, operation, data, warnings, meta };
}

export function failure(
  operation: string,
  err: CohentError,
  meta: Meta = {},
  warnings: string[] = [],
): FailureEnvelope {
  const error: FailureEnvelope["error"] = { code: err.code, message: err.message, retryable: err.retryable };
  if (err.details !== undefined) error.details = err.details;
  return { version: PROTOCOL_VERSION, ok: false, operation, error, warnings, meta };
}
