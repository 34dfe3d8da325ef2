import { CohentError, ERRORS, type ErrorCode } from "@cohent/protocol/codes";
import type { Envelope, FailureEnvelope, Meta, SuccessEnvelope } from "@cohent/protocol";

/**
 * Builders for the protocol's envelopes without zod: the types come from
 * @cohent/protocol (erased at build), the codes and retryable flags from its
 * zod-free `codes` module.
 */

export type { Envelope };

export function ok<T>(
  operation: string,
  data: T,
  meta: Meta = {},
  warnings: string[] = [],
): SuccessEnvelope<T> {
  return { version: 1, ok: true, operation, data, warnings, meta };
}

export function fail(
  operation: string,
  code: ErrorCode,
  message?: string,
  details?: unknown,
  meta: Meta = {},
): FailureEnvelope {
  const error: FailureEnvelope["error"] = {
    code,
    message: message ?? ERRORS[code].message,
    retryable: ERRORS[code].retryable,
  };
  if (details !== undefined) error.details = details;
  return { version: 1, ok: false, operation, error, warnings: [], meta };
}

/** Anything thrown, as a failure envelope; an unknown error is INTERNAL with its message. */
export function failFrom(operation: string, err: unknown): FailureEnvelope {
  if (err instanceof CohentError) return fail(operation, err.code, err.message, err.details);
  return fail(operation, "INTERNAL", err instanceof Error ? err.message : String(err));
}

/** A service answer's error with the protocol's retryable flag for its code. */
export function withProtocolFlags<E extends Envelope<unknown>>(env: E): E {
  if (!env.ok && env.error.code in ERRORS) env.error.retryable = ERRORS[env.error.code].retryable;
  return env;
}
