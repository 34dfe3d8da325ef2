import type {
  Action,
  Decision,
  GuardFilesDetail,
  Notice,
  NoticeKind,
  NoticePeer,
  ShellWriteDetail,
} from "@cohent/protocol";
import type { EventRow, TailEvent, Untold } from "./contract-rows.js";

// What happened (store/contract): the repository's change log, decisions,
// packets and guard catches (Journal), and the notices owed to each intent.

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
    /** shell-write: what the Control Room shows of the catch (ShellWriteDetail); guard-files: GuardFilesDetail; a refusal: the rule that made it. */
    detail?: ShellWriteDetail | GuardFilesDetail | { rule: string } | null;
    at: Date;
  }): Promise<void>;
  setShellWriteDetail(id: string, detail: ShellWriteDetail): Promise<void>;
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
