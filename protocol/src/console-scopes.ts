import type { Guard } from "./packets.js";

// The Scopes view: who claims what, who waits behind them, what was asked of
// them, and the claims freed without their holder asking.

/** An intent as the Scopes view names it: a holder or a waiter. */
export interface ScopeParty {
  intentId: string;
  sessionId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}

/** One waiter in the claim queue, in queue order. */
export interface ScopeWaiterView extends ScopeParty {
  paths: string[];
  /** 1 is next. */
  place: number;
  since: string;
}

/** An open release request: `from` asks the holder to let go of `paths`. The note is untrusted text. */
export interface ReleaseRequestView {
  id: string;
  from: ScopeParty;
  paths: string[];
  note: string;
  at: string;
}

/** One live claim with its holder, the queue behind it, and the release requests asked of it. */
export interface ScopeClaimView extends ScopeParty {
  paths: string[];
  since: string;
  guard: Guard;
  /** The holder's lease has lapsed (silent or expired): the claim frees at expiry. */
  lapsed: boolean;
  waiters: ScopeWaiterView[];
  releaseRequests: ReleaseRequestView[];
}

/** A claim freed without its holder asking (lease expiry, a person's release, a cancel), recently. */
export interface LostClaimView extends ScopeParty {
  paths: string[];
  reason: string;
  at: string;
}

/** GET /api/console/repos/:owner/:name/scopes: the Scopes view, in one read. */
export interface ScopesView {
  repo: string;
  serverTime: string;
  claims: ScopeClaimView[];
  /** Every waiter, in queue order (also listed under each claim it waits for). */
  queue: ScopeWaiterView[];
  lost: LostClaimView[];
}

export interface ScopeReleaseResult {
  intentId: string;
  released: string[];
  /** Waiters granted by this release. */
  granted: string[];
}
