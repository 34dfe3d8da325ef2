import type { Control, WiringChange } from "@cohent/protocol";
import type { Dated, PairingChange, PairingRow, RepoRow, SessionRow, TokenRow } from "./contract-rows.js";
import type { Models as M } from "./sql/tables.js";

// Who calls, and through what (store/contract): repositories, agent tokens and
// their sessions, pairing, the Control Room's sign-in, and checkouts' guard wiring.

export interface Repos {
  byName(name: string): Promise<RepoRow | null>;
  byId(id: string): Promise<RepoRow | null>;
  create(data: {
    id: string;
    name: string;
    goal?: string;
    caseInsensitive?: boolean;
    createdAt: Date;
  }): Promise<RepoRow>;
  /** Many at once, a few hundred to a statement (a set-up file's); each row as `create` would answer it. */
  createMany(
    rows: { id: string; name: string; goal: string; caseInsensitive: boolean; createdAt: Date }[],
  ): Promise<RepoRow[]>;
  setGoal(id: string, goal: string): Promise<RepoRow>;
  list(): Promise<RepoRow[]>;
  known(names: string[]): Promise<Set<string>>;
  named(names: string[]): Promise<RepoRow[]>;
}

export interface Tokens {
  byHash(tokenHash: string): Promise<(TokenRow & { repo: RepoRow }) | null>;
  get(id: string): Promise<(TokenRow & { repoName: string }) | null>;
  create(t: {
    id: string;
    repoId: string;
    person: string;
    client: string | null;
    tokenHash: string;
    at: Date;
  }): Promise<void>;
  /** Many at once, a few hundred to a statement (a set-up file's). */
  createMany(
    rows: {
      id: string;
      repoId: string;
      person: string;
      client: string | null;
      tokenHash: string;
      at: Date;
    }[],
  ): Promise<void>;
  revoke(id: string, at: Date): Promise<TokenRow>;
}

export interface Sessions {
  renew(s: {
    repoId: string;
    tokenId: string;
    key: string;
    client: string | null;
    /** The id of a session seen for the first time: asked only then, not on every call. */
    newId: () => string;
    at: Date;
    renewEveryMs?: number;
  }): Promise<SessionRow>;
  get(id: string): Promise<(SessionRow & { repoName: string }) | null>;
  setClient(id: string, client: string | null, model: string | null): Promise<void>;
  setHost(
    s: { id: string; tokenId: string; key: string },
    h: { host: string; hostVersion: string | null; wiring: string; guardSeen: boolean },
    at: Date,
  ): Promise<void>;
  setCheckout(id: string, checkout: string): Promise<void>;
  seenSince(
    repoId: string,
    since?: Date,
  ): Promise<
    Pick<M.Session, "id" | "tokenId" | "host" | "hostVersion" | "wiring" | "guardSeenAt" | "checkout">[]
  >;
  setControl(id: string, control: Control, controlReason: string | null): Promise<SessionRow>;
  fence(id: string, repoId: string): Promise<void>;
  ofRepo(
    repoId: string,
  ): Promise<
    (SessionRow & { person: string; intents: { id: string; state: string; lastAction: string }[] })[]
  >;
  addCommand(c: {
    id: string;
    repoId: string;
    sessionId: string;
    kind: string;
    actor: string;
    reason: string | null;
    at: Date;
  }): Promise<void>;
}

export interface Pairings {
  /** False on a user-code collision (the caller draws another). */
  create(
    data: Omit<PairingRow, "status" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "decidedAt">,
  ): Promise<boolean>;
  byDeviceHash(deviceCodeHash: string): Promise<PairingRow | null>;
  byUserCode(userCode: string): Promise<PairingRow | null>;
  update(id: string, data: PairingChange): Promise<PairingRow>;
  claimApproved(id: string, at: Date): Promise<boolean>;
  pending(now: Date, repoName?: string): Promise<PairingRow[]>;
}

export interface ConsoleAuth {
  addLoginLink(l: { id: string; tokenHash: string; at: Date; expiresAt: Date }): Promise<void>;
  redeemLoginLink(tokenHash: string, at: Date): Promise<boolean>;
  addSession(s: Dated<Omit<M.ConsoleSession, "lastSeenAt">>): Promise<void>;
  sessionByHash(tokenHash: string): Promise<M.ConsoleSession | null>;
  touchSession(id: string, at: Date): Promise<void>;
  endSession(id: string): Promise<void>;
}

export interface Wiring {
  report(r: {
    newId: () => string;
    repoId: string;
    tokenId: string;
    checkout: string;
    sessionId: string;
    changes: WiringChange[];
    at: Date;
  }): Promise<void>;
  openOf(tokenId: string, checkout: string): Promise<{ count: number; includes: boolean }>;
  modified(repoId: string): Promise<
    {
      checkout: string;
      tokenId: string;
      sessionId: string;
      sessionKey: string | null;
      client: string | null;
      changes: WiringChange[];
      reportedAt: Date;
    }[]
  >;
}

/** A write's request id (protocol REQUEST_ID_HEADER) and its first answer (null while the write runs). */
export type RequestRecord = M.AgentRequest;

export interface Requests {
  /**
   * Records a token's request id, in the write's transaction: null when this is its first arrival (the
   * write goes on), else the record found, whose write ran or runs (on PostgreSQL an insert racing a
   * transaction that holds the same id waits for it to end).
   */
  begin(r: { tokenId: string; key: string; bodyHash: string; at: Date }): Promise<RequestRecord | null>;
  get(tokenId: string, key: string): Promise<RequestRecord | null>;
  /** Stores the first answer (JSON); false when the id is not there or already answered. */
  answer(tokenId: string, key: string, outcome: string): Promise<boolean>;
  /** Deletes the ids recorded before `before`; the count deleted. */
  expire(before: Date): Promise<number>;
}
