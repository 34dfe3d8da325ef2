import type { Guard } from "@cohent/protocol";

/** Lease timings. The server's clock is the only clock. */
export interface LeaseConfig {
  /** After this long without a call a session shows as silent. */
  silentMs: number;
  /** After this long the lease is expired: its scopes are freed and its work is inactive. */
  leaseMs: number;
}

export const DEFAULT_LEASE: LeaseConfig = { silentMs: 2 * 60_000, leaseMs: 10 * 60_000 };

export function guardStatus(lastSeen: Date, now: Date, lease: LeaseConfig): Guard {
  const age = now.getTime() - lastSeen.getTime();
  if (age >= lease.leaseMs) return "expired";
  if (age >= lease.silentMs) return "silent";
  return "calling-in";
}

/** Sessions seen after this instant still hold their lease. */
export function leaseCutoff(now: Date, lease: LeaseConfig): Date {
  return new Date(now.getTime() - lease.leaseMs);
}
