import type { WiringChange } from "@cohent/protocol";
import type { Wiring } from "./contract.js";
import type { Handle } from "./handle.js";
import { json } from "./rows.js";
import { inListSql, listParam } from "./sql/exec.js";
import { T } from "./sql/tables.js";

/**
 * "Guard wiring modified": per checkout (the token and the opaque id its
 * adapter sends), the latest state its adapter reported. A modified state
 * replaces the last one; an intact one clears it (the row keeps what was
 * modified, with the time it was cleared).
 */
export const wiring = ({ x, touch }: Handle): Wiring => ({
  report: async (r) => {
    const { repoId, tokenId, checkout, sessionId, at } = r;
    if (r.changes.length) {
      await x.run(
        `INSERT INTO "WiringReport" ("id", "repoId", "tokenId", "checkout", "sessionId", "changes", "reportedAt") VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT ("tokenId", "checkout") DO UPDATE SET "sessionId" = excluded."sessionId", "changes" = excluded."changes", "reportedAt" = excluded."reportedAt", "clearedAt" = NULL`,
        r.newId(),
        repoId,
        tokenId,
        checkout,
        sessionId,
        json(r.changes),
        x.time(at),
      );
      touch(repoId, "control");
      return;
    }
    const cleared = await x.run(
      `UPDATE "WiringReport" SET "sessionId" = ?, "clearedAt" = ? WHERE "tokenId" = ? AND "checkout" = ? AND "clearedAt" IS NULL`,
      sessionId,
      x.time(at),
      tokenId,
      checkout,
    );
    if (cleared) touch(repoId, "control");
  },
  /** How many of this token's checkouts are reported modified now, and whether `checkout` is one of them. */
  openOf: async (tokenId: string, checkout: string) => {
    const rows = await x.all(
      `SELECT "checkout" FROM "WiringReport" WHERE "tokenId" = ? AND "clearedAt" IS NULL`,
      tokenId,
    );
    return { count: rows.length, includes: rows.some((r) => r.checkout === checkout) };
  },
  /** The repository's checkouts whose wiring is modified now, newest report first, with the reporting session. */
  modified: async (repoId: string) => {
    const rows = (
      await x.all(
        `SELECT ${T.WiringReport.cols()} FROM "WiringReport" WHERE "repoId" = ? AND "clearedAt" IS NULL ORDER BY "reportedAt" DESC, "id" ASC`,
        repoId,
      )
    ).map((r) => T.WiringReport.decode(r));
    const ids = [...new Set(rows.map((r) => r.sessionId))];
    const sessions = new Map(
      (ids.length
        ? await x.all(
            `SELECT "id", "key", "client" FROM "Session" WHERE ${inListSql(x.dialect, `"id"`)}`,
            listParam(x.dialect, ids),
          )
        : []
      ).map((s) => [s.id as string, { key: s.key as string, client: s.client as string | null }]),
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
