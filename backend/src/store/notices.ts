import { NoticePeer, type Notice, type NoticeKind } from "@cohent/protocol";
import type { Db, PrismaTx } from "./db.js";
import type { Overrides, Touch } from "./index.js";
import { outsideStatements } from "./outside.js";
import { queueStatements } from "./queue-fast.js";
import { json, list } from "./rows.js";

type NoticeRow = {
  id: string;
  kind: string;
  paths: string;
  peer: string | null;
  note: string | null;
  reason: string | null;
  queueLength: number | null;
  text: string;
  createdAt: Date;
};
export const toNotice = (r: NoticeRow): Notice => ({
  id: r.id,
  kind: r.kind as NoticeKind,
  paths: list(r.paths),
  peer: r.peer ? NoticePeer.parse(JSON.parse(r.peer)) : null,
  note: r.note,
  reason: r.reason,
  queueLength: r.queueLength,
  at: r.createdAt.toISOString(),
  text: r.text,
});

const oldestFirst = [{ createdAt: "asc" as const }, { id: "asc" as const }];

/** Untold notices of a session, by intent: what the kill-switch read and the poll's quick path ask. */
export type Untold = ReadonlyMap<string, number>;

/**
 * Notices (protocol Notice): written under the repository's lock, told once
 * in the recipient intent's next packet. Every write touches the
 * repository's `notices` change kind, which invalidates the untold counts
 * held in memory (noticeOverrides).
 */
export const notices = (c: PrismaTx, touch: Touch = () => {}) => ({
  add: async ({
    at,
    paths,
    peer,
    ...n
  }: {
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
  }) => {
    await c.notice.create({
      data: { ...n, paths: json(paths), peer: peer ? json(peer) : null, createdAt: at },
    });
    touch(n.repoId, "notices");
  },
  hasUntold: async (intentId: string) =>
    !!(await c.notice.findFirst({ where: { intentId, toldAt: null }, select: { id: true } })),
  /**
   * Takes the intent's oldest untold notices (at most `take`) for a packet:
   * each is marked told by this packet only if no other packet took it first.
   */
  tell: async (
    intentId: string,
    take: number,
    packet: { id: string; repoId: string; at: Date },
  ): Promise<Notice[]> => {
    const rows = await c.notice.findMany({ where: { intentId, toldAt: null }, orderBy: oldestFirst, take });
    const told: Notice[] = [];
    for (const r of rows) {
      const won = await c.notice.updateMany({
        where: { id: r.id, toldAt: null },
        data: { toldAt: packet.at, packetId: packet.id },
      });
      if (won.count === 1) told.push(toNotice(r));
    }
    if (told.length) touch(packet.repoId, "notices");
    return told;
  },
  /** A session's untold notices, counted by intent. */
  untold: async (sessionId: string, _repoId: string): Promise<Untold> => {
    const rows = await c.notice.findMany({
      where: { sessionId, toldAt: null },
      select: { intentId: true },
      take: 10_000,
    });
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.intentId, (counts.get(r.intentId) ?? 0) + 1);
    return counts;
  },
  /** What `untold` would answer from memory without a query, or null when it would have to ask (never queries). */
  peekUntold: (_sessionId: string, _repoId: string): Untold | null => null,
  /** Claims lost recently (the Scopes view), newest first. */
  recentLost: async (repoId: string, since: Date, take: number) =>
    (
      await c.notice.findMany({
        where: { repoId, kind: "scope-lost", createdAt: { gte: since } },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
        select: { intentId: true, paths: true, reason: true, createdAt: true },
      })
    ).map((r) => ({ intentId: r.intentId, paths: list(r.paths), reason: r.reason ?? "", at: r.createdAt })),
});

/**
 * The untold counts in memory, per session: the kill-switch read and the
 * empty poll ask them on every call, and they change only when a notice is
 * written or told, which moves the repository's `notices` stamp (this
 * instance's commits, another's NOTIFY, SQLite's data_version, the
 * backstop; store/changes). The stamp is taken before the read.
 * Inside a transaction, a packet's "any untold?" is a prepared
 * statement (store/queue-fast), on either database.
 */
export function noticeOverrides(db: Db): Overrides {
  const { changes } = db;
  const fast = queueStatements();
  const out = outsideStatements(db.read);
  const outside = (c: PrismaTx) => c === (db.prisma as unknown);
  const held = new Map<string, { stamp: number; untold: Untold }>();
  const peek = (sessionId: string, repoId: string): Untold | null => {
    const h = held.get(sessionId);
    return h && h.stamp === changes.stamp(repoId, "notices") ? h.untold : null;
  };
  return {
    notices: (c: PrismaTx, touch: Touch) => {
      const base = notices(c, touch);
      if (!outside(c)) {
        const s = fast(c);
        return s
          ? {
              ...base,
              peekUntold: peek,
              hasUntold: async (intentId: string) => s.anyUntold(intentId),
              tell: async (...a: Parameters<typeof base.tell>) =>
                (await s.anyUntold(a[0])) ? base.tell(...a) : [],
            }
          : { ...base, peekUntold: peek };
      }
      return {
        ...base,
        peekUntold: peek,
        untold: async (sessionId: string, repoId: string) => {
          const stamp = changes.stamp(repoId, "notices");
          const h = held.get(sessionId);
          if (h && h.stamp === stamp) return h.untold;
          const untold = await out.untold(sessionId);
          if (held.size >= 20_000) held.clear(); // a cache, not a store
          held.set(sessionId, { stamp, untold });
          return untold;
        },
      };
    },
  };
}
