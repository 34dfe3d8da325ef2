import { DEFAULT_LIMITS, type RateLimits } from "./rate-limit.js";

/** What the HTTP layer holds besides the operations' deps: rate limits and the readiness probe. */
export interface HttpRuntime {
  limits: RateLimits;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
}

/** The default for callers of createApp alone: default limits, no readiness probe. */
export function localRuntime(ping: () => Promise<void> = async () => {}): HttpRuntime {
  return { limits: DEFAULT_LIMITS, ping };
}
