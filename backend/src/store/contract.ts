import type {
  Action,
  CommandKind,
  Control,
  Decision,
  IntentRecord,
  Notice,
  NoticeKind,
  NoticePeer,
  Party,
  ShellWriteDetail,
  Usage,
  WiringChange,
} from "@cohent/protocol";
import type { Claimed, PeerClaim } from "../core/arbitrate.js";
import type { MetricRows } from "../core/metrics.js";
import type { RecapRow } from "../core/recap.js";
import type { NameLookup } from "../core/resolver-index.js";
import type { Changes } from "./changes.js";
import type { Provider } from "./db.js";
import type { Models as M } from "./sql/tables.js";

/**
 * The store's contract: every method the operations may call, declared here
 * and implemented once (one factory per concern, store/<concern>.ts, on the
 * SQL layer of store/sql), in the manner of Beads' internal/storage. The row
 * types are the schema's (store/sql/tables, checked against Prisma's model
 * types); the test/contract suite runs every method on SQLite and PostgreSQL.
 * Outside `tx` each statement commits on its own; inside, all of them commit
 * or none does.
 */

type Dated<T> = Omit<T, "createdAt"> & { at: Date };

export type RepoRow = M.Repository;
export type TokenRow = M.AgentToken;
export type SessionRow = Omit<M.Session, "control"> & { control: Control };
export type PairingRow = M.Pairing;

/** A work intent as every reader shows it: with its claim, its last checkpoint, its session's liveness. */
export interface IntentRow {
  id: string;
  repoId: string;
  sessionId: string;
  person: string;
  client: string | null;
  model: string | null;
  prompt: string;
  promptPaths: string[];
  record: IntentRecord | null;
  state: string;
  lastAction: Action;
  place: number | null;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  /** The paths it claims now. */
  scope: string[];
  lastCheckpoint: { status: string; summary: string; at: string } | null;
  session: { key: string; lastSeenAt: Date; control: Control; controlReason: string | null };
}
export type IntentHead = Pick<IntentRow, "id" | "repoId" | "sessionId" | "state" | "closedAt" | "lastAction">;
/** What the resolver and relevance read of a peer: no prompt, checkpoint or session. */
export type ActivePeer = Pick<IntentRow, "id" | "place" | "state" | "record" | "lastAction" | "scope">;
export interface Commit {
  hash: string;
  paths: string[];
  summary: string;
  at: string;
}
/** Who an intent is, with its session and lease: what the queue and the Scopes view name. */
export interface QueueParty {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
  sessionId: string;
  lastSeenAt: Date;
}
export interface QueueWait {
  id: string;
  intentId: string;
  paths: string[];
  createdAt: Date;
}
export interface ReleaseAskRow {
  id: string;
  fromIntentId: string;
  toIntentId: string;
  paths: string[];
  note: string;
  at: Date;
}
export type TailEvent = { seq: number; intentId: string; kind: string; peerIds: string[]; summary: string };
export type EventRow = Omit<M.Event, "peerIds"> & { peerIds: string[] };
/** A shell write caught after the call (guard kind shell-write); `detail` null when unreadable. */
export type ShellWriteRow = Pick<M.GuardCatch, "id" | "intentId" | "agentId"> & {
  paths: string[];
  peerIds: string[];
  detail: ShellWriteDetail | null;
  at: Date;
};
/** Untold notices of a session, by intent: what the kill-switch read and the poll's quick path ask. */
export type Untold = ReadonlyMap<string, number>;

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
  setGoal(id: string, goal: string): Promise<RepoRow>;
  list(): Promise<RepoRow[]>;
  known(names: string[]): Promise<Set<string>>;
}

export interface Intents {
  get(id: string): Promise<IntentRow | null>;
  head(id: string): Promise<IntentHead | null>;
  owner(id: string): Promise<{ repoId: string; sessionId: string } | null>;
  openIdsOfSession(sessionId: string): Promise<string[]>;
  latestOpenOfSession(sessionId: string): Promise<IntentRow | null>;
  active(repoId: string, cutoff: Date): Promise<IntentRow[]>;
  activePeers(repoId: string, cutoff: Date): Promise<ActivePeer[]>;
  recent(repoId: string, cutoff: Date, take: number): Promise<IntentRow[]>;
  open(repoId: string): Promise<IntentRow[]>;
  openOfToken(repoId: string, tokenId: string): Promise<IntentRow[]>;
  completed(repoId: string, take: number): Promise<IntentRow[]>;
  candidates(repoId: string, lookup: NameLookup, cutoff: Date): Promise<IntentRow[]>;
  byIds(ids: string[]): Promise<IntentRow[]>;
  parties(ids: string[]): Promise<Party[]>;
  namedPeers(intentId: string, repoId: string): Promise<{ named: string[]; oldestSeen: Date | null }>;
  create(
    i: Dated<
      Pick<M.Intent, "id" | "repoId" | "sessionId" | "person" | "client" | "model" | "prompt" | "createdAt">
    > & { promptPaths: string[] },
  ): Promise<void>;
  update(
    id: string,
    change: {
      record?: IntentRecord;
      usage?: Usage;
      state?: string;
      lastAction?: string;
      updatedAt?: Date;
      closedAt?: Date;
    },
  ): Promise<void>;
  addCheckpoint(k: {
    id: string;
    intentId: string;
    status: string;
    summary: string;
    paths: string[] | null;
    source: string;
    commit?: string | null;
    at: Date;
  }): Promise<void>;
  commits(ids: string[]): Promise<Map<string, Commit[]>>;
}

export interface Claims {
  pathsOf(intentId: string): Promise<string[] | null>;
  peers(repoId: string, exceptIntentId: string): Promise<PeerClaim[]>;
  claimed(repoId: string, exceptIntentId: string): Promise<Claimed[]>;
  expired(repoId: string, cutoff: Date): Promise<string[]>;
  set(c: { intentId: string; repoId: string; paths: string[]; at: Date }): Promise<void>;
  release(intentId: string): Promise<boolean>;
}

export interface Journal {
  lock(repoId: string): Promise<void>;
  holds(repoId: string): boolean;
  addEvent(e: {
    repoId: string;
    intentId: string;
    kind: string;
    summary: string;
    peerIds?: string[];
    at: Date;
  }): Promise<void>;
  latestSeq(repoId: string): Promise<number>;
  tailAfter(repoId: string, after: number, take: number): Promise<TailEvent[]>;
  eventsAfter(repoId: string, seq: number, take: number): Promise<EventRow[]>;
  lastDecision(intentId: string): Promise<Decision | null>;
  addDecision(d: {
    id: string;
    repoId: string;
    intentId: string;
    action: Action;
    peerIds: string[];
    reason: string;
    at: Date;
  }): Promise<Decision>;
  addPacket(p: {
    id: string;
    repoId: string;
    intentId: string;
    sessionId: string;
    kind: string;
    action: string;
    /** null: the repository's latest sequence number, read by the insert itself (no round trip before it). */
    cursor: number | null;
    chars: number;
    tokens: number;
    peerIds: string[];
    at: Date;
  }): Promise<{ cursor: Promise<number> }>;
  /** Answer work for after the COMMIT (store/handle `finish`): a packet's cursor filled in. */
  finish(p: Promise<unknown>): void;
  ackPacket(a: {
    id: string;
    sessionId: string;
    chars: number;
    at: Date;
  }): Promise<"acked" | "already" | "missing">;
  addGuardCatch(g: {
    id: string;
    repoId: string;
    intentId: string;
    agentId: string | null;
    kind: string;
    paths: string[];
    peerIds: string[];
    /** shell-write: what the Control Room shows of the catch (ShellWriteDetail). */
    detail?: ShellWriteDetail | null;
    at: Date;
  }): Promise<void>;
  setShellWriteDetail(id: string, detail: ShellWriteDetail): Promise<void>;
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

export type PairingChange = Partial<
  Pick<
    PairingRow,
    "status" | "interval" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "updatedAt" | "decidedAt"
  >
>;
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

export interface Reads {
  metricRows(repoId: string, since?: Date): Promise<MetricRows>;
  fingerprint(): Promise<string>;
  repoSummary(
    repoId: string,
  ): Promise<{ openIntents: number; activeTokens: number; people: string[]; lastActivityAt: Date | null }>;
  scopeCatches(
    repoId: string,
    since: Date,
  ): Promise<
    { intentId: string; agentId: string | null; kind: string; paths: string[]; peerIds: string[]; at: Date }[]
  >;
  subagentCatches(
    repoId: string,
    since: Date,
  ): Promise<{ intentId: string; agentId: string; kind: string; at: Date }[]>;
  /** Shell writes caught since an instant, newest first, at most `take`. */
  shellWrites(repoId: string, since: Date, take: number): Promise<ShellWriteRow[]>;
  shellWrite(id: string): Promise<(ShellWriteRow & { repoId: string }) | null>;
  overlapDecisions(repoId: string, take: number): Promise<Decision[]>;
  commands(
    repoId: string,
    take: number,
  ): Promise<
    {
      id: string;
      kind: CommandKind;
      actor: string;
      reason: string | null;
      at: Date;
      sessionId: string;
      person: string;
      client: string | null;
    }[]
  >;
  tokens(repoId: string): Promise<
    {
      id: string;
      person: string;
      client: string | null;
      createdAt: Date;
      revokedAt: Date | null;
      lastCallAt: Date | null;
      machine: string | null;
      approvedBy: string | null;
    }[]
  >;
  recapIntents(repoId: string, since: Date): Promise<RecapRow[]>;
  commandCount(repoId: string, since: Date): Promise<number>;
}

export interface Queue {
  any(repoId: string): Promise<boolean>;
  list(repoId: string): Promise<(QueueWait & { party: QueueParty })[]>;
  of(intentId: string): Promise<QueueWait | null>;
  tailAt(repoId: string): Promise<Date | null>;
  put(w: { id: string; repoId: string; intentId: string; paths: string[]; at: Date }): Promise<void>;
  remove(intentId: string): Promise<string[] | null>;
  leave(intentId: string): Promise<boolean>;
  expired(repoId: string, cutoff: Date): Promise<string[]>;
  holders(repoId: string): Promise<(QueueParty & { paths: string[]; since: Date })[]>;
  parties(ids: string[]): Promise<Map<string, QueueParty>>;
  party(intentId: string): Promise<QueueParty | null>;
}

export interface Notices {
  add(n: {
    id: string;
    repoId: string;
    intentId: string;
    sessionId: string;
    kind: NoticeKind;
    paths: string[];
    peer: NoticePeer | null;
    note: string | null;
    reason: string | null;
    queueLength: number | null;
    waitedMs: number | null;
    text: string;
    at: Date;
  }): Promise<void>;
  hasUntold(intentId: string): Promise<boolean>;
  tell(intentId: string, take: number, packet: { id: string; repoId: string; at: Date }): Promise<Notice[]>;
  untold(sessionId: string, repoId: string): Promise<Untold>;
  /** What `untold` would answer from memory without a query, or null when it would have to ask (never queries). */
  peekUntold(sessionId: string, repoId: string): Untold | null;
  recentLost(
    repoId: string,
    since: Date,
    take: number,
  ): Promise<{ intentId: string; paths: string[]; reason: string; at: Date }[]>;
}

export interface ReleaseAsks {
  add(a: {
    id: string;
    repoId: string;
    fromIntentId: string;
    toIntentId: string;
    paths: string[];
    note: string;
    at: Date;
  }): Promise<void>;
  openTo(toIntentId: string): Promise<ReleaseAskRow[]>;
  openOfRepo(repoId: string): Promise<ReleaseAskRow[]>;
  close(ids: string[], at: Date, honoured: boolean): Promise<void>;
  closeFrom(fromIntentId: string, at: Date): Promise<void>;
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

/** Every query, one interface per concern, over one connection or one transaction. */
export interface Tx {
  repos: Repos;
  intents: Intents;
  claims: Claims;
  journal: Journal;
  tokens: Tokens;
  sessions: Sessions;
  pairings: Pairings;
  consoleAuth: ConsoleAuth;
  reads: Reads;
  queue: Queue;
  notices: Notices;
  releaseAsks: ReleaseAsks;
  wiring: Wiring;
}

/** The store: its concerns run outside a transaction (one statement each), and `tx` runs them as one. */
export interface Store extends Tx {
  provider: Provider;
  /** Change hints and the high-water cursor of each repository. */
  changes: Changes;
  /**
   * Runs `fn` as one transaction: the one transaction function. Every operation that writes is
   * one. With `batch` (a repository's id), it may share its transaction with other writes to that
   * repository, in a savepoint of its own (store/batch).
   */
  tx<T>(fn: (t: Tx) => Promise<T>, opts?: { batch?: string }): Promise<T>;
  /** One round trip to the database, for readiness: throws when it cannot be reached. */
  ping(): Promise<void>;
}
