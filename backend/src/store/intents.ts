import type { Action, IntentRecord, Usage } from "@cohent/protocol";
import { indexNames, type NameLookup } from "../core/resolver-index.js";
import type { PrismaTx } from "./db.js";
import { commitSource, intentInclude, json, list, toCommit, toIntent, toParty } from "./rows.js";

type FindMany = NonNullable<Parameters<PrismaTx["intent"]["findMany"]>[0]>;
const oldestFirst = [{ createdAt: "asc" as const }, { id: "asc" as const }];

/** Work intents (decoded, with their claim, last checkpoint and session liveness) and their checkpoints. */
export const intents = (c: PrismaTx, _touch?: unknown) => {
  const many = async (args: Omit<FindMany, "include" | "select">) =>
    (await c.intent.findMany({ ...args, include: intentInclude })).map(toIntent);
  return {
    get: async (id: string) => {
      const row = await c.intent.findUnique({ where: { id }, include: intentInclude });
      return row && toIntent(row);
    },
    /** The intent's own row, without relations or decoding: what ownership checks and plain writes need. */
    head: async (id: string) => {
      const row = await c.intent.findUnique({
        where: { id },
        select: { id: true, repoId: true, sessionId: true, state: true, closedAt: true, lastAction: true },
      });
      return row && { ...row, lastAction: row.lastAction as Action };
    },
    /** Only where it lives and whose it is: the poll's cheap path. */
    owner: async (id: string) =>
      await c.intent.findUnique({ where: { id }, select: { repoId: true, sessionId: true } }),
    openIdsOfSession: async (sessionId: string) =>
      (await c.intent.findMany({ where: { sessionId, closedAt: null }, select: { id: true } })).map(
        (r) => r.id,
      ),
    latestOpenOfSession: async (sessionId: string) =>
      (await many({ where: { sessionId, closedAt: null }, orderBy: { createdAt: "desc" }, take: 1 }))[0] ??
      null,
    /** Open intents whose session was seen at or after `cutoff`: the repository's active work, oldest first. */
    active: (repoId: string, cutoff: Date) =>
      many({
        where: { repoId, closedAt: null, session: { lastSeenAt: { gte: cutoff } } },
        orderBy: oldestFirst,
      }),
    /** The `take` most recently updated active intents, newest first (a publish packet's peers). */
    recent: (repoId: string, cutoff: Date, take: number) =>
      many({
        where: { repoId, closedAt: null, session: { lastSeenAt: { gte: cutoff } } },
        orderBy: [{ updatedAt: "desc" }, ...oldestFirst],
        take,
      }),
    /** Every open intent, live or not, oldest first. */
    open: (repoId: string) => many({ where: { repoId, closedAt: null }, orderBy: oldestFirst }),
    openOfToken: (repoId: string, tokenId: string) =>
      many({ where: { repoId, closedAt: null, session: { tokenId } }, orderBy: { createdAt: "asc" } }),
    completed: (repoId: string, take: number) =>
      many({ where: { repoId, state: "completed" }, orderBy: { closedAt: "desc" }, take }),
    /** The resolver's candidate peers through the IntentName index: active and completed, oldest first. */
    candidates: async (repoId: string, lookup: NameLookup, cutoff: Date) => {
      const idsOf = async (where: { kind: string; name: { in: string[] } }[]) =>
        where.length
          ? [
              ...new Set(
                (
                  await c.intentName.findMany({ where: { repoId, OR: where }, select: { intentId: true } })
                ).map((r) => r.intentId),
              ),
            ]
          : [];
      const active = await idsOf(lookup.active.map((k) => ({ kind: k.kind, name: { in: k.names } })));
      const completed = await idsOf(
        lookup.completed.length ? [{ kind: "output", name: { in: lookup.completed } }] : [],
      );
      return [
        ...(active.length
          ? await many({
              where: { id: { in: active }, repoId, closedAt: null, session: { lastSeenAt: { gte: cutoff } } },
              orderBy: oldestFirst,
            })
          : []),
        ...(completed.length
          ? await many({ where: { id: { in: completed }, repoId, state: "completed" }, orderBy: oldestFirst })
          : []),
      ];
    },
    byIds: async (ids: string[]) => (ids.length ? many({ where: { id: { in: ids } } }) : []),
    parties: async (ids: string[]) =>
      ids.length
        ? (
            await c.intent.findMany({
              where: { id: { in: ids } },
              select: { id: true, person: true, client: true, model: true, record: true },
            })
          ).map(toParty)
        : [],
    /** The peers the intent's last decision named, and the oldest lease renewal among those not completed (null: none). */
    namedPeers: async (intentId: string, repoId: string) => {
      const last = await c.decision.findFirst({
        where: { intentId, repoId },
        orderBy: { createdAt: "desc" },
        select: { peerIds: true },
      });
      const named = list(last?.peerIds);
      if (!named.length) return { named, oldestSeen: null };
      const seen = await c.session.aggregate({
        where: { intents: { some: { id: { in: named }, state: { not: "completed" } } } },
        _min: { lastSeenAt: true },
      });
      return { named, oldestSeen: seen._min.lastSeenAt };
    },
    create: async ({
      at,
      promptPaths,
      ...i
    }: {
      id: string;
      repoId: string;
      sessionId: string;
      person: string;
      client: string | null;
      model: string | null;
      prompt: string;
      promptPaths: string[];
      at: Date;
    }) => {
      await c.intent.create({ data: { ...i, promptPaths: json(promptPaths), createdAt: at, updatedAt: at } });
    },
    /**
     * Writes the intent's columns. A record also gives it its place in its repository's decisions,
     * one more than the highest there, each time: the caller holds the repository lock (journal
     * `lock`) and decides it next, so places follow the order in which records are decided.
     */
    update: async (
      id: string,
      {
        record,
        usage,
        ...rest
      }: {
        record?: IntentRecord;
        usage?: Usage;
        state?: string;
        lastAction?: string;
        updatedAt?: Date;
        closedAt?: Date;
      },
    ) => {
      const { repoId } = await c.intent.update({
        where: { id },
        data: {
          ...rest,
          ...(record ? { record: json(record) } : {}),
          ...(usage ? { usage: json(usage) } : {}),
        },
        select: { repoId: true },
      });
      if (record) {
        const highest = await c.intent.aggregate({ where: { repoId }, _max: { place: true } });
        await c.intent.update({ where: { id }, data: { place: (highest._max.place ?? 0) + 1 } });
        // The resolver index follows the record, in the same transaction.
        await c.intentName.deleteMany({ where: { intentId: id } });
        const names = indexNames(record).map((n) => ({ ...n, repoId, intentId: id }));
        if (names.length) await c.intentName.createMany({ data: names });
      }
    },
    addCheckpoint: async ({
      at,
      paths,
      commit,
      source,
      ...cp
    }: {
      id: string;
      intentId: string;
      status: string;
      summary: string;
      paths: string[] | null;
      source: string;
      commit?: string | null;
      at: Date;
    }) => {
      await c.checkpoint.create({
        data: {
          ...cp,
          source: commit ? commitSource(commit) : source,
          paths: paths ? json(paths) : null,
          createdAt: at,
        },
      });
    },
    /** The commits recorded for these intents, oldest first, by intent. */
    commits: async (ids: string[]) => {
      const rows = ids.length
        ? await c.checkpoint.findMany({
            where: { intentId: { in: ids }, source: { startsWith: "commit:" } },
            orderBy: oldestFirst,
          })
        : [];
      const out = new Map<string, ReturnType<typeof toCommit>[]>();
      for (const k of rows) out.set(k.intentId, [...(out.get(k.intentId) ?? []), toCommit(k)]);
      return out;
    },
  };
};
