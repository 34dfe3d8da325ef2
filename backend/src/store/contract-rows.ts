import type { Action, Control, IntentRecord, ShellWriteDetail } from "@cohent/protocol";
import type { Models as M } from "./sql/tables.js";

// The rows the store's methods answer with (store/contract): the schema's
// (store/sql/tables), with their JSON columns decoded.

/** A row whose `createdAt` a write is given as `at`. */
export type Dated<T> = Omit<T, "createdAt"> & { at: Date };

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

/** The columns a pairing's `update` may change. */
export type PairingChange = Partial<
  Pick<
    PairingRow,
    "status" | "interval" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "updatedAt" | "decidedAt"
  >
>;
