import pino, { type Logger } from "pino";

/** How long an info line may wait in the buffer, and how much may wait. */
const FLUSH_MS = 100;
const BUFFER_BYTES = 4096;

/**
 * Structured logs on stderr. Secrets are redacted by path as a second line of defence: nothing logs bodies.
 * Info lines (the access log: one per request) are written in batches, at most FLUSH_MS late, instead of one
 * write(2) each; a warning or an error is written at once, with everything before it, and the buffer is
 * flushed on exit. A kill -9 can lose the last FLUSH_MS of info lines, never a warning.
 */
export function createLogger(level = process.env.COHENT_LOG_LEVEL ?? "info"): Logger {
  const dest = pino.destination({ dest: 2, sync: true, minLength: BUFFER_BYTES, periodicFlush: FLUSH_MS });
  process.once("exit", () => dest.flush());
  return pino(
    {
      level,
      base: { service: "cohent" },
      redact: {
        paths: [
          "token",
          "*.token",
          "authorization",
          "*.authorization",
          "prompt",
          "*.prompt",
          "req.headers.authorization",
        ],
        censor: "[redacted]",
      },
      hooks: {
        logMethod(args, method, lvl) {
          method.apply(this, args);
          if (lvl >= 40) dest.flush();
        },
      },
    },
    dest,
  );
}
