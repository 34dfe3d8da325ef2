import type { PrismaTx } from "./db.js";
import { json, list } from "./rows.js";

const toAsk = (r: {
  id: string;
  fromIntentId: string;
  toIntentId: string;
  paths: string;
  note: string;
  createdAt: Date;
}) => ({
  id: r.id,
  fromIntentId: r.fromIntentId,
  toIntentId: r.toIntentId,
  paths: list(r.paths),
  note: r.note,
  at: r.createdAt,
});

/** Release requests (ReleaseAsk): one row per holder asked; open until honoured or closed. */
export const releaseAsks = (c: PrismaTx) => ({
  add: async ({
    at,
    paths,
    ...a
  }: {
    id: string;
    repoId: string;
    fromIntentId: string;
    toIntentId: string;
    paths: string[];
    note: string;
    at: Date;
  }) => {
    await c.releaseAsk.create({ data: { ...a, paths: json(paths), createdAt: at } });
  },
  /** The open asks made of a holder. */
  openTo: async (toIntentId: string) =>
    (
      await c.releaseAsk.findMany({ where: { toIntentId, closedAt: null }, orderBy: { createdAt: "asc" } })
    ).map(toAsk),
  /** Every open ask of the repository, oldest first: the Scopes view. */
  openOfRepo: async (repoId: string) =>
    (await c.releaseAsk.findMany({ where: { repoId, closedAt: null }, orderBy: { createdAt: "asc" } })).map(
      toAsk,
    ),
  /** Closes asks: honoured (the holder let go itself) or not. */
  close: async (ids: string[], at: Date, honoured: boolean) => {
    if (ids.length)
      await c.releaseAsk.updateMany({
        where: { id: { in: ids }, closedAt: null },
        data: { closedAt: at, ...(honoured ? { honouredAt: at } : {}) },
      });
  },
  /** Closes every open ask made by an intent that closed: nobody waits on its answer any more. */
  closeFrom: async (fromIntentId: string, at: Date) => {
    await c.releaseAsk.updateMany({ where: { closedAt: null, fromIntentId }, data: { closedAt: at } });
  },
});
