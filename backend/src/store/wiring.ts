import type { WiringChange } from "@cohent/protocol";
import type { PrismaTx } from "./db.js";
import type { Touch } from "./index.js";
import { json } from "./rows.js";

/**
 * "Guard wiring modified": per checkout (the token and the opaque id its
 * adapter sends), the latest state its adapter reported. A modified state
 * replaces the last one; an intact one clears it (the row keeps what was
 * modified, with the time it was cleared).
 */
export const wiring = (c: PrismaTx, touch: Touch = () => {}) => ({
  report: async (r: {
    newId: () => string;
    repoId: string;
    tokenId: string;
    checkout: string;
    sessionId: string;
    changes: WiringChange[];
    at: Date;
  }): Promise<void> => {
    const { repoId, tokenId, checkout, sessionId, at } = r;
    if (r.changes.length) {
      const changes = json(r.changes);
      await c.wiringReport.upsert({
        where: { tokenId_checkout: { tokenId, checkout } },
        create: { id: r.newId(), repoId, tokenId, checkout, sessionId, changes, reportedAt: at },
        update: { sessionId, changes, reportedAt: at, clearedAt: null },
      });
      touch(repoId, "control");
      return;
    }
    const cleared = await c.wiringReport.updateMany({
      where: { tokenId, checkout, clearedAt: null },
      data: { sessionId, clearedAt: at },
    });
    if (cleared.count) touch(repoId, "control");
  },
  /** How many of this token's checkouts are reported modified now, and whether `checkout` is one of them. */
  openOf: async (tokenId: string, checkout: string) => {
    const rows = await c.wiringReport.findMany({
      where: { tokenId, clearedAt: null },
      select: { checkout: true },
    });
    return { count: rows.length, includes: rows.some((r) => r.checkout === checkout) };
  },
  /** The repository's checkouts whose wiring is modified now, newest report first, with the reporting session. */
  modified: async (repoId: string) => {
    const rows = await c.wiringReport.findMany({
      where: { repoId, clearedAt: null },
      orderBy: [{ reportedAt: "desc" }, { id: "asc" }],
    });
    const sessions = new Map(
      (
        await c.session.findMany({
          where: { id: { in: [...new Set(rows.map((r) => r.sessionId))] } },
          select: { id: true, key: true, client: true },
        })
      ).map((s) => [s.id, s]),
    );
    return rows.map((r) => ({
      checkout: r.checkout,
      tokenId: r.tokenId,
      sessionId: r.sessionId,
      sessionKey: sessions.get(r.sessionId)?.key ?? null,
      client: sessions.get(r.sessionId)?.client ?? null,
      changes: JSON.parse(r.changes) as WiringChange[],
      reportedAt: r.reportedAt,
    }));
  },
});
