import type { IntentRecord, Party, Usage } from "@cohent/protocol";
import type { Claimed, PeerClaim } from "../core/arbitrate.js";
import type { NameLookup } from "../core/resolver-index.js";
import type {
  ActivePeer,
  Commit,
  Dated,
  IntentHead,
  IntentRow,
  QueueParty,
  QueueWait,
  ReleaseAskRow,
} from "./contract-rows.js";
import type { Models as M } from "./sql/tables.js";

// The work (store/contract): intents and their checkpoints, the claims they
// hold, the queue of those waiting for a claim, and the release asks between them.

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
