import { CohentError, ERRORS, type ErrorCode } from "./codes.js";
import type { Envelope, FailureEnvelope, Meta, SuccessEnvelope } from "./envelope.js";

// The envelope builders, free of zod so that the adapter's bundles use the same ones as the
// backend: the types come from envelope.ts (erased at build), codes and retryable flags from codes.ts.

export const PROTOCOL_VERSION = 1 as const;

export function success<T>(
  operation: string,
  data: T,
  meta: Meta = {},
  warnings: string[] = [],
): SuccessEnvelope<T> {
  return { version: PROTOCOL_VERSION, ok: true, operation, data, warnings, meta };
}

/** A failure envelope of a code, with the protocol's message unless one is given. */
export function fail(
  operation: string,
  code: ErrorCode,
  message?: string,
  details?: unknown,
  meta: Meta = {},
  warnings: string[] = [],
): FailureEnvelope {
  const error: FailureEnvelope["error"] = {
    code,
    message: message ?? ERRORS[code].message,
    retryable: ERRORS[code].retryable,
  };
  if (details !== undefined) error.details = details;
  return { version: PROTOCOL_VERSION, ok: false, operation, error, warnings, meta };
}

/** A CohentError as a failure envelope. */
export function failure(
  operation: string,
  err: CohentError,
  meta: Meta = {},
  warnings: string[] = [],
): FailureEnvelope {
  return fail(operation, err.code, err.message, err.details, meta, warnings);
}

/** Anything thrown, as a failure envelope; an unknown error is INTERNAL with its message. */
export function failFrom(operation: string, err: unknown): FailureEnvelope {
  if (err instanceof CohentError) return failure(operation, err);
  return fail(operation, "INTERNAL", err instanceof Error ? err.message : String(err));
}

/** A service answer's error with the protocol's retryable flag for its code. */
export function withProtocolFlags<E extends Envelope<unknown>>(env: E): E {
  if (!env.ok && env.error.code in ERRORS)
    env.error.retryable = ERRORS[env.error.code as ErrorCode].retryable;
  return env;
}
