import type { IntentRecord, Usage } from "@cohent/protocol";
import type { PrismaTx } from "./db.js";
import { intentInclude, json, toIntent, toParty, type IntentRow, type Party } from "./rows.js";

export interface IntentChange {
  record?: IntentRecord;
  state?: string;
  lastAction?: string;
  usage?: Usage;
  updatedAt?: Date;
  closedAt?: Date;
}

/** Work intents and their checkpoints. */
export interface Intents {
  get(id: string): Promise<IntentRow | null>;
  /** Only where it lives and whose it is: the poll's cheap path. */
  owner(id: string): Promise<{ repoId: string; sessionId: string } | null>;
  openIdsOfSession(sessionId: string): Promise<string[]>;
  latestOpenOfSession(sessionId: string): Promise<IntentRow | null>;
  /** Open intents whose session was seen at or after `cutoff`, oldest first. */
  active(repoId: string, cutoff: Date): Promise<IntentRow[]>;
  /** Every open intent, live or not, oldest first. */
  open(repoId: string): Promise<IntentRow[]>;
  /** Open intents of the sessions of one token. */
  openOfToken(repoId: string, tokenId: string): Promise<IntentRow[]>;
  completed(repoId: string, take: number): Promise<IntentRow[]>;
  byIds(ids: string[]): Promise<IntentRow[]>;
  parties(ids: string[]): Promise<Party[]>;
  /** How many of these unfinished intents belong to sessions last seen before `cutoff`. */
  countLapsed(ids: string[], cutoff: Date): Promise<number>;
  create(i: { id: string; repoId: string; sessionId: string; person: string; client: string | null; model: string | null; prompt: string; promptPaths: string[]; at: Date }): Promise<void>;
  update(id: string, change: IntentChange): Promise<void>;
  addCheckpoint(c: { id: string; intentId: string; status: string; summary: string; paths: string[] | null; source: string; at: Date }): Promise<void>;
}

export const intents = (c: PrismaTx): Intents => {
  const many = async (args: Omit<Parameters<PrismaTx["intent"]["findMany"]>[0] & object, "include">) =>
    (await c.intent.findMany({ ...args, include: intentInclude })).map(toIntent);
  const oldestFirst = [{ createdAt: "asc" as const }, { id: "asc" as const }];
  return {
    get: async (id) => {
      const row = await c.intent.findUnique({ where: { id }, include: intentInclude });
      return row ? toIntent(row) : null;
    },
    owner: (id) => c.intent.findUnique({ where: { id }, select: { repoId: true, sessionId: true } }),
    openIdsOfSession: async (sessionId) =>
      (await c.intent.findMany({ where: { sessionId, closedAt: null }, select: { id: true } })).map((r) => r.id),
    latestOpenOfSession: async (sessionId) =>
      (await many({ where: { sessionId, closedAt: null }, orderBy: { createdAt: "desc" }, take: 1 }))[0] ?? null,
    active: (repoId, cutoff) => many({ where: { repoId, closedAt: null, session: { lastSeenAt: { gte: cutoff } } }, orderBy: oldestFirst }),
    open: (repoId) => many({ where: { repoId, closedAt: null }, orderBy: oldestFirst }),
    openOfToken: (repoId, tokenId) => many({ where: { repoId, closedAt: null, session: { tokenId } }, orderBy: { createdAt: "asc" } }),
    completed: (repoId, take) => many({ where: { repoId, state: "completed" }, orderBy: { closedAt: "desc" }, take }),
    byIds: (ids) => (ids.length ? many({ where: { id: { in: ids } } }) : Promise.resolve([])),
    parties: async (ids) =>
      ids.length
        ? (await c.intent.findMany({ where: { id: { in: ids } }, select: { id: true, person: true, client: true, model: true, record: true } })).map(toParty)
        : [],
    countLapsed: (ids, cutoff) =>
      c.intent.count({ where: { id: { in: ids }, state: { not: "completed" }, session: { lastSeenAt: { lt: cutoff } } } }),
    create: async (i) => {
      await c.intent.create({
        data: {
          id: i.id, repoId: i.repoId, sessionId: i.sessionId, person: i.person, client: i.client, model: i.model, prompt: i.prompt,
          promptPaths: json(i.promptPaths), createdAt: i.at, updatedAt: i.at,
        },
      });
    },
    update: async (id, { record, usage, ...rest }) => {
      await c.intent.update({
        where: { id },
        data: { ...rest, ...(record ? { record: json(record) } : {}), ...(usage ? { usage: json(usage) } : {}) },
      });
    },
    addCheckpoint: async ({ at, paths, ...cp }) => {
      await c.checkpoint.create({ data: { ...cp, paths: paths ? json(paths) : null, createdAt: at } });
    },
  };
};
