import { CohentError } from "@cohent/protocol/codes";
/**
 * Protocol-v1 envelopes on the client side, without zod: the adapter only
 * builds and reads them. Codes are the stable ones of protocol/errors.ts.
 */

export interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  details?: unknown;
}

export interface SessionMeta {
  id: string;
  control: "active" | "paused" | "cancelled";
  controlReason: string | null;
  leaseExpiresAt: string;
}

export interface Envelope<T = any> {
  version: 1;
  ok: boolean;
  operation: string;
  data?: T;
  error?: ErrorBody;
  warnings: string[];
  meta: { serverTime?: string; session?: SessionMeta; [k: string]: unknown };
}

/** retryable flags of the client-side codes (mirrors protocol ERRORS). */
const RETRYABLE: Record<string, boolean> = {
  CONTROL_PLANE_UNREACHABLE: true,
  NOT_CONFIGURED: false,
  NOT_PAIRED: false,
  INVALID_REPOSITORY: false,
  INVALID_INPUT: false,
  INVALID_PATH: false,
  CANCELLED: false,
  INTERNAL: true,
  PAIRING_PENDING: true,
  PAIRING_SLOW_DOWN: true,
};

export class ClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export function ok<T>(operation: string, data: T, meta: Envelope["meta"] = {}, warnings: string[] = []): Envelope<T> {
  return { version: 1, ok: true, operation, data, warnings, meta };
}

export function fail(operation: string, code: string, message: string, details?: unknown, meta: Envelope["meta"] = {}): Envelope<never> {
  const error: ErrorBody = { code, message, retryable: RETRYABLE[code] ?? false };
  if (details !== undefined) error.details = details;
  return { version: 1, ok: false, operation, error, warnings: [], meta };
}

export function failFrom(operation: string, err: unknown): Envelope<never> {
  if (err instanceof ClientError) return fail(operation, err.code, err.message, err.details);
  if (err instanceof CohentError) return fail(operation, err.code, err.message, err.details);
  return fail(operation, "INTERNAL", err instanceof Error ? err.message : String(err));
}
