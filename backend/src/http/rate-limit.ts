import { createHash } from "node:crypto";
import type { Context, Next } from "koa";
import { CohentError } from "@cohent/protocol";
import { hashToken } from "../ids.js";
import { bearerSecret } from "../operations/agent/session.js";

/**
 * Token buckets, per key (an agent token, a pairing request, a client
 * address), in this instance's memory: N instances behind a balancer allow
 * up to N times the rate, which still stops a flood. A refused request costs
 * no database query, so one token's flood cannot starve another's polls.
 */
export interface RateLimit {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests allowed at once above the sustained rate. */
  burst: number;
}

/** A guarded agent makes a kill-switch read per tool call, a poll every few seconds and a claim per new target. */
export const DEFAULT_LIMITS = {
  token: { perSecond: 50, burst: 200 },
  pairing: { perSecond: 2, burst: 10 },
} as const;
export type RateLimits = { token: RateLimit; pairing: RateLimit } | null;

/** COHENT_RATE_LIMIT=off (or 0) turns limiting off, e.g. for a load benchmark; "<perSecond>/<burst>" sets the per-token rate. */
export function rateLimitsFromEnv(env = process.env): RateLimits {
  const raw = env.COHENT_RATE_LIMIT?.trim();
  if (raw === "off" || raw === "0") return null;
  const m = raw?.match(/^(\d+(?:\.\d+)?)\/(\d+)$/);
  return m ? { ...DEFAULT_LIMITS, token: { perSecond: Number(m[1]), burst: Number(m[2]) } } : DEFAULT_LIMITS;
}

export class Buckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly limit: RateLimit,
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one request from `key`'s bucket: 0 when allowed, else the seconds to wait. */
  take(key: string, now = performance.now()): number {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.buckets.clear(); // a key flood must not grow memory without bound
      b = { tokens: this.limit.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.limit.burst, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond));
  }
}

/** The bucket key of a request, or null to let it pass (no key to limit on). */
type KeyOf = (ctx: Context) => string | null;

/** How long a refusal is held before it is sent, and how many refusals per key may be held at once. */
const TARPIT_MS = 1_000;
const TARPIT_PER_KEY = 32;

/**
 * Refuses a request over its key's rate with 429 RATE_LIMITED and Retry-After.
 * The refusal is held for a second first (a tarpit) and closes the
 * connection: a flooding client that waits for its answers is slowed to a
 * few requests per second per connection, so its refusals cannot take the
 * event loop from other tokens' calls. Past TARPIT_PER_KEY held refusals the
 * rest are sent at once.
 */
export function rateLimited(limit: RateLimit | undefined, keyOf: KeyOf) {
  const buckets = limit ? new Buckets(limit) : null;
  const held = new Map<string, number>();
  return async (ctx: Context, next: Next) => {
    const key = buckets && keyOf(ctx);
    const wait = key ? buckets.take(key) : 0;
    if (key && wait > 0) {
      const holding = held.get(key) ?? 0;
      if (holding < TARPIT_PER_KEY) {
        held.set(key, holding + 1);
        await new Promise((r) => setTimeout(r, Math.min(TARPIT_MS, wait * 1000)));
        const left = (held.get(key) ?? 1) - 1;
        if (left > 0) held.set(key, left);
        else held.delete(key);
      }
      ctx.set("Retry-After", String(wait));
      ctx.set("Connection", "close");
      throw new CohentError("RATE_LIMITED", `Too many requests; retry after ${wait} s.`, {
        retryAfterSeconds: wait,
      });
    }
    await next();
  };
}

/**
 * Agent calls: per bearer secret, hashed so the map holds no secret. A bearer token's key is its
 * stored hash (ids hashToken), left in ctx.state.secretHash for authentication to reuse.
 */
export const byBearer: KeyOf = (ctx) => {
  const auth = ctx.get("authorization");
  if (!auth) return null;
  const secret = bearerSecret(auth);
  if (secret) return (ctx.state.secretHash = hashToken(secret));
  return createHash("sha256").update(auth).digest("base64url");
};
