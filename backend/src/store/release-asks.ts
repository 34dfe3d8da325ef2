import type { ReleaseAsks } from "./contract.js";
import type { Handle } from "./handle.js";
import { json, list } from "./rows.js";
import { inListSql, listParam, type Row } from "./sql/exec.js";
import { insert, T } from "./sql/tables.js";

const toAsk = (r: Row) => {
  const a = T.ReleaseAsk.decode(r);
  return {
    id: a.id,
    fromIntentId: a.fromIntentId,
    toIntentId: a.toIntentId,
    paths: list(a.paths),
    note: a.note,
    at: a.createdAt,
  };
};
const COLS = T.ReleaseAsk.cols();

/** Release requests (ReleaseAsk): one row per holder asked; open until honoured or closed. A class (store/intents IntentStore). */
class ReleaseAskStore implements ReleaseAsks {
  private readonly h: Handle;
  constructor(h: Handle) {
    this.h = h;
  }

  async add({ at, paths, ...a }: Parameters<ReleaseAsks["add"]>[0]) {
    await insert(this.h.x, T.ReleaseAsk, { ...a, paths: json(paths), createdAt: at });
  }

  /** The open asks made of a holder (every claim asks: usually there is none, which one index seek answers). */
  async openTo(toIntentId: string) {
    const { x } = this.h;
    return !(await x.get(
      `SELECT 1 FROM "ReleaseAsk" WHERE "toIntentId" = ? AND "closedAt" IS NULL LIMIT 1`,
      toIntentId,
    ))
      ? []
      : (
          await x.all(
            `SELECT ${COLS} FROM "ReleaseAsk" WHERE "toIntentId" = ? AND "closedAt" IS NULL ORDER BY "createdAt" ASC`,
            toIntentId,
          )
        ).map(toAsk);
  }

  /** Every open ask of the repository, oldest first: the Scopes view. */
  async openOfRepo(repoId: string) {
    return (
      await this.h.x.all(
        `SELECT ${COLS} FROM "ReleaseAsk" WHERE "repoId" = ? AND "closedAt" IS NULL ORDER BY "createdAt" ASC`,
        repoId,
      )
    ).map(toAsk);
  }

  /** Closes asks: honoured (the holder let go itself) or not. */
  async close(ids: string[], at: Date, honoured: boolean) {
    const { x } = this.h;
    if (ids.length)
      await x.later(
        `UPDATE "ReleaseAsk" SET "closedAt" = ?${honoured ? `, "honouredAt" = ?` : ""} WHERE ${inListSql(x.dialect, `"id"`)} AND "closedAt" IS NULL`,
        [x.time(at), ...(honoured ? [x.time(at)] : []), listParam(x.dialect, ids)],
      );
  }

  /** Closes every open ask made by an intent that closed: nobody waits on its answer any more. */
  async closeFrom(fromIntentId: string, at: Date) {
    const { x } = this.h;
    await x.later(`UPDATE "ReleaseAsk" SET "closedAt" = ? WHERE "closedAt" IS NULL AND "fromIntentId" = ?`, [
      x.time(at),
      fromIntentId,
    ]);
  }
}

export const releaseAsks = (h: Handle): ReleaseAsks => new ReleaseAskStore(h);
