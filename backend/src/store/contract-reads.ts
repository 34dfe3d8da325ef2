import type { CommandKind, Decision } from "@cohent/protocol";
import type { MetricRows } from "../core/metrics.js";
import type { RecapRow } from "../core/recap.js";
import type { ShellWriteRow } from "./contract-rows.js";

// The Control Room's reads (store/contract): what its pages, metrics and recap
// read across concerns, none of which writes.

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
  /**
   * The refusals recorded since an instant (every catch but a write caught after the call), counted by
   * their kind and the rule their report named (null when it named none).
   */
  refusalCounts(repoId: string, since: Date): Promise<{ kind: string; rule: string | null; count: number }[]>;
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
