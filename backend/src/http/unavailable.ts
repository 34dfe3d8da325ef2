/**
 * Whether an error means the database could not be reached or used right
 * now (connection refused or lost, pool exhausted, SQLite file locked or
 * unreadable) rather than a bug: such a request answers the retryable
 * DATABASE_UNAVAILABLE, and the transaction it ran in was rolled back, so
 * nothing is half-written.
 */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2028"]);
const PATTERN =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|Connection terminated|connection (?:is )?closed|timeout exceeded when trying to connect|Can't reach database|DatabaseNotReachable|ConnectionClosed|terminating connection|too many (?:clients|connections)|the database system is (?:starting up|shutting down)|SQLITE_BUSY|database is locked|SQLITE_CANTOPEN|unable to open database|SQLITE_IOERR|disk I\/O error|SQLITE_READONLY|SQLITE_FULL|Transaction API error|Unable to start a transaction/i;

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  const e = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    kind?: unknown;
    meta?: unknown;
    name?: unknown;
  };
  if (
    typeof e.code === "string" &&
    (PRISMA_CODES.has(e.code) || /^(08|57P0|53300)/.test(e.code) || PATTERN.test(e.code))
  )
    return true;
  if (typeof e.kind === "string" && PATTERN.test(e.kind)) return true;
  if (typeof e.message === "string" && PATTERN.test(e.message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1) || isDatabaseUnavailable(e.meta, depth + 1);
}
