import { z } from "zod";
import { CohentError, ERROR_CODES } from "./codes.js";

export { CohentError, ERROR_CODES, ERRORS, type ErrorCode } from "./codes.js";
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/** Compact, stable rendering of zod issues for `details`. */
export function zodDetails(error: z.ZodError): { issues: { path: string; message: string }[] } {
  return {
    issues: error.issues.slice(0, 20).map((i) => ({
      path: i.path.map(String).join(".") || "(root)",
      message: i.message,
    })),
  };
}

/** Maps anything thrown to a CohentError: zod errors to INVALID_INPUT, aborts to CANCELLED. */
export function toCohentError(err: unknown): CohentError {
  if (err instanceof CohentError) return err;
  if (err instanceof z.ZodError) return new CohentError("INVALID_INPUT", undefined, zodDetails(err));
  if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) {
    return new CohentError("CANCELLED");
  }
  return new CohentError("INTERNAL");
}
