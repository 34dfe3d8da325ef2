// Error codes and the error type, free of zod so that the adapter's hook bundle can use them.

/**
 * Stable error codes. A code never changes meaning; callers branch on it.
 * `status` is the HTTP status the backend answers with; transports without
 * HTTP (CLI, MCP) ignore it.
 */
export const ERRORS = {
  INVALID_JSON: { status: 400, retryable: false, message: "The request body is not valid JSON." },
  INVALID_INPUT: { status: 400, retryable: false, message: "The request does not match protocol version 1." },
  INVALID_PATH: { status: 400, retryable: false, message: "A path is not a repository-relative path." },
  // Path bounds (issue 23): refused before any matching runs.
  PATHS_TOO_COMPLEX: {
    status: 400,
    retryable: false,
    message: "The path patterns cost more to match than the bounds allow (pathCost, pathsCost).",
  },
  INVALID_SESSION: {
    status: 400,
    retryable: false,
    message: "The x-cohent-session header is missing or malformed.",
  },
  INVALID_CURSOR: { status: 400, retryable: false, message: "The x-cohent-cursor header is not a cursor." },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: "The request body is too large." },
  HEADERS_TOO_LARGE: { status: 431, retryable: false, message: "The request's headers are too large." },
  BAD_REQUEST: { status: 400, retryable: false, message: "The request is not valid HTTP." },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    message: "Send the request body as application/json.",
  },
  // The HTTP edges: a body's Content-Encoding, and the Expect header (backend/src/http/body.ts, edges.ts).
  UNSUPPORTED_ENCODING: {
    status: 415,
    retryable: false,
    message: "The body's Content-Encoding is not accepted; send it as gzip or deflate, or uncompressed.",
  },
  INVALID_ENCODING: {
    status: 400,
    retryable: false,
    message: "The request body is not valid data of its Content-Encoding (corrupt or truncated).",
  },
  EXPECTATION_FAILED: {
    status: 417,
    retryable: false,
    message: "The only expectation this server meets is Expect: 100-continue.",
  },
  UNAUTHENTICATED: { status: 401, retryable: false, message: "A valid agent token is required." },
  NOT_INTENT_OWNER: {
    status: 403,
    retryable: false,
    message: "That work intent belongs to another session.",
  },
  INTENT_NOT_FOUND: { status: 404, retryable: false, message: "No such work intent in this repository." },
  PACKET_NOT_FOUND: { status: 404, retryable: false, message: "No such packet for this session." },
  SESSION_NOT_FOUND: { status: 404, retryable: false, message: "No such session." },
  REPOSITORY_NOT_FOUND: { status: 404, retryable: false, message: "No such repository." },
  CATCH_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: "No such caught shell write in this repository.",
  },
  NOT_FOUND: { status: 404, retryable: false, message: "No such route." },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false, message: "That method is not allowed here." },
  INTENT_CLOSED: {
    status: 409,
    retryable: false,
    message: "That work intent is closed; publish a new prompt.",
  },
  SCOPE_CONFLICT: { status: 409, retryable: true, message: "The scope overlaps an active peer's scope." },
  NOT_HELD: { status: 409, retryable: false, message: "No peer holds any of those paths." },
  NOT_RESTORABLE: {
    status: 409,
    retryable: false,
    message: "The writer's checkout did not keep the bytes from before that catch.",
  },
  NO_WRITER_INTENT: {
    status: 409,
    retryable: false,
    message: "That catch names no open work intent of the writer to carry a restore request.",
  },
  PACKET_ALREADY_ACKED: { status: 409, retryable: false, message: "That packet was already acknowledged." },
  // Request ids (idempotency-key): a retry is answered with the first answer, never run twice.
  REQUEST_ID_REUSED: {
    status: 409,
    retryable: false,
    message: "That request id was sent with a different request; draw a new id for each write.",
  },
  REQUEST_IN_FLIGHT: {
    status: 409,
    retryable: true,
    message:
      "The first request with this request id has not answered yet; retry with the same id for its answer.",
  },
  REPOSITORY_EXISTS: { status: 409, retryable: false, message: "That repository is already registered." },
  SESSION_PAUSED: { status: 423, retryable: true, message: "This session is paused from the Control Room." },
  SESSION_CANCELLED: {
    status: 423,
    retryable: false,
    message: "This session was cancelled from the Control Room.",
  },
  PAIRING_PENDING: {
    status: 428,
    retryable: true,
    message: "The pairing request has not been approved yet.",
  },
  PAIRING_SLOW_DOWN: {
    status: 429,
    retryable: true,
    message: "Polling too fast; wait the interval before asking again.",
  },
  PAIRING_DENIED: { status: 403, retryable: false, message: "The pairing request was denied." },
  PAIRING_EXPIRED: {
    status: 410,
    retryable: false,
    message: "The pairing request expired; start a new one.",
  },
  FORBIDDEN: { status: 403, retryable: false, message: "Not allowed." },
  CSRF_REJECTED: { status: 403, retryable: false, message: "The request failed the CSRF check." },
  INTERNAL: { status: 500, retryable: true, message: "Internal error." },
  DATABASE_TOO_NEW: {
    status: 500,
    retryable: false,
    message: "The database was migrated by a newer Cohent; upgrade cohent to serve it.",
  },
  INVALID_WAIT: {
    status: 400,
    retryable: false,
    message: "The x-cohent-wait header must be a whole number of seconds from 0 to 30.",
  },
  RATE_LIMITED: {
    status: 429,
    retryable: true,
    message: "Too many requests; wait the Retry-After seconds before asking again.",
  },
  // Past capacity (backend/src/http/admission.ts): answered at once, before any work, with Retry-After.
  OVERLOADED: {
    status: 503,
    retryable: true,
    message: "This Cohent instance is at capacity; nothing was done. Retry after the Retry-After seconds.",
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    message: "The database cannot be reached right now; nothing was written. Retry shortly.",
  },
  // Client-side codes (adapter, agent CLI, MCP server).
  CONTROL_PLANE_UNREACHABLE: {
    status: 503,
    retryable: true,
    message: "The Cohent service cannot be reached.",
  },
  NOT_CONFIGURED: { status: 400, retryable: false, message: "This checkout is not configured for Cohent." },
  NOT_PAIRED: {
    status: 401,
    retryable: false,
    message: "No credential for this repository on this machine.",
  },
  INVALID_REPOSITORY: { status: 400, retryable: false, message: "Not a Git repository." },
  REPOSITORY_OUTSIDE_ROOT: {
    status: 403,
    retryable: false,
    message: "The repository lies outside the client's roots.",
  },
  REPOSITORY_MISMATCH: {
    status: 400,
    retryable: false,
    message: "The request names a different repository.",
  },
  CANCELLED: { status: 499, retryable: false, message: "The operation was cancelled." },
  NOTHING_TO_COMMIT: {
    status: 409,
    retryable: false,
    message: "None of your changed paths are left to commit.",
  },
  INDEX_LOCKED: { status: 423, retryable: true, message: "Another git command holds the index lock." },
  GIT_FAILED: { status: 500, retryable: false, message: "A git command failed." },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];

/** The one error type every layer throws; transports render it. */
export class CohentError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: unknown;
  constructor(code: ErrorCode, message?: string, details?: unknown) {
    super(message ?? ERRORS[code].message);
    this.name = "CohentError";
    this.code = code;
    this.retryable = ERRORS[code].retryable;
    this.details = details;
  }
  get status(): number {
    return ERRORS[this.code].status;
  }
}
