import type { Logger } from "pino";
import { createWake, type Wake } from "../live/wake.js";
import { DEFAULT_LIMITS, type RateLimits } from "./rate-limit.js";

/** What the HTTP layer holds besides the operations' deps: wake-ups, rate limits and the readiness probe. */
export interface HttpRuntime {
  wake: Wake;
  limits: RateLimits;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
}

/** An in-process runtime (one instance, no cross-instance wake-ups) for callers of createApp alone. */
export function localRuntime(log: Logger, ping: () => Promise<void> = async () => {}): HttpRuntime {
  return { wake: createWake({ provider: "sqlite", url: "", log }), limits: DEFAULT_LIMITS, ping };
}
