import pino, { type Logger } from "pino";

/** Structured logs on stderr. Secrets are redacted by path as a second line of defence: nothing logs bodies. */
export function createLogger(level = process.env.COHENT_LOG_LEVEL ?? "info"): Logger {
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
    },
    pino.destination(2),
  );
}
