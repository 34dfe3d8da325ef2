import { NoticePeer, type Notice, type NoticeKind } from "@cohent/protocol";
import type { Notices, Untold } from "./contract.js";
import type { Handle } from "./handle.js";
import { json, list } from "./rows.js";
import type { Exec, Row } from "./sql/exec.js";
import { insert, T } from "./sql/tables.js";

export const toNotice = (row: Row): Notice => {
  const r = T.Notice.decode(row);
  return {
    id: r.id,
    kind: r.kind as NoticeKind,
    paths: list(r.paths),
    peer: r.peer ? NoticePeer.parse(JSON.parse(r.peer)) : null,
    note: r.note,
    reason: r.reason,
    queueLength: r.queueLength,
    at: r.createdAt.toISOString(),
    text: r.text,
  };
};

type Held = { stamp: number; untold: Untold };

/** The intent's oldest untold notice exists: every packet asks, and almost always there is none (one index seek). */
const anyUntold = async (x: Exec, intentId: string) =>
  !!(await x.get(`SELECT 1 FROM "Notice" WHERE "intentId" = ? AND "toldAt" IS NULL LIMIT 1`, intentId));

/**
 * Notices (protocol Notice): written under the repository's lock, told once
 * in the recipient intent's next packet. Every write touches the
 * repository's `notices` change kind, which invalidates the untold counts
 * held in memory (store/memory): the kill-switch read and the empty poll ask
 * them on every call, and they change only when a notice is written or told.
 * A class, its methods built once (store/intents IntentStore).
 */
class NoticeStore implements Notices {
  private readonly h: Handle;
  constructor(h: Handle) {
    this.h = h;
  }

  async add({ at, paths, peer, ...n }: Parameters<Notices["add"]>[0]) {
    await insert(this.h.x, T.Notice, {
      ...n,
      paths: json(paths),
      peer: peer ? json(peer) : null,
      createdAt: at,
    });
    this.h.touch(n.repoId, "notices");
  }

  hasUntold(intentId: string) {
    return anyUntold(this.h.x, intentId);
  }

  /**
   * Takes the intent's oldest untold notices (at most `take`) for a packet:
   * each is marked told by this packet only if no other packet took it first.
   */
  async tell(
    intentId: string,
    take: number,
    packet: { id: string; repoId: string; at: Date },
  ): Promise<Notice[]> {
    const { x } = this.h;
    if (!(await anyUntold(x, intentId))) return [];
    const rows = await x.all(
      `SELECT ${T.Notice.cols()} FROM "Notice" WHERE "intentId" = ? AND "toldAt" IS NULL ORDER BY "createdAt" ASC, "id" ASC LIMIT ?`,
      intentId,
      take,
    );
    const told: Notice[] = [];
    for (const r of rows) {
      const won = await x.run(
        `UPDATE "Notice" SET "toldAt" = ?, "packetId" = ? WHERE "id" = ? AND "toldAt" IS NULL`,
        x.time(packet.at),
        packet.id,
        r.id,
      );
      if (won === 1) told.push(toNotice(r));
    }
    if (told.length) this.h.touch(packet.repoId, "notices");
    return told;
  }

  /** A session's untold notices, counted by intent; outside a transaction, from memory while the repository's notices stamp holds. */
  async untold(sessionId: string, repoId: string): Promise<Untold> {
    const { h } = this;
    const count = async () =>
      new Map(
        (
          await h.x.all(
            `SELECT "intentId", COUNT(*) AS "n" FROM "Notice" WHERE "sessionId" = ? AND "toldAt" IS NULL GROUP BY "intentId"`,
            sessionId,
          )
        ).map((r) => [r.intentId as string, Number(r.n)]),
      );
    if (h.tx) return count();
    const held = h.mem<string, Held>("untold");
    const stamp = h.changes.stamp(repoId, "notices");
    const m = held.get(sessionId);
    if (m && m.stamp === stamp) return m.untold;
    const untold = await count();
    held.set(sessionId, { stamp, untold });
    return untold;
  }

  /** What `untold` would answer from memory without a query, or null when it would have to ask (never queries). */
  peekUntold(sessionId: string, repoId: string): Untold | null {
    const { h } = this;
    const m = h.mem<string, Held>("untold").get(sessionId);
    return m && m.stamp === h.changes.stamp(repoId, "notices") ? m.untold : null;
  }

  /** Claims lost recently (the Scopes view), newest first. */
  async recentLost(repoId: string, since: Date, take: number) {
    const { x } = this.h;
    return (
      await x.all(
        `SELECT "intentId", "paths", "reason", "createdAt" FROM "Notice" WHERE "repoId" = ? AND "kind" = 'scope-lost' AND "createdAt" >= ? ORDER BY "createdAt" DESC, "id" DESC LIMIT ?`,
        repoId,
        x.time(since),
        take,
      )
    ).map((r) => ({
      intentId: r.intentId as string,
      paths: list(r.paths as string),
      reason: (r.reason as string | null) ?? "",
      at: new Date(r.createdAt as string),
    }));
  }
}

export const notices = (h: Handle): Notices => new NoticeStore(h);
