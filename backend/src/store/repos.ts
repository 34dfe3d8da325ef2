import type { Repos } from "./contract.js";
import type { Handle } from "./handle.js";
import { inListSql, listParam } from "./sql/exec.js";
import { insert, insertMany, T } from "./sql/tables.js";

const COLS = T.Repository.cols();

type RepoRow = ReturnType<typeof T.Repository.decode>;

/**
 * Repositories. `byName` (every agent call names its repository) answers from memory outside a
 * transaction until the repository's control stamp moves (a goal change).
 */
export const repos = (h: Handle): Repos => {
  const { x, touch } = h;
  const cache = h.mem<string, { row: RepoRow; stamp: number }>("repos");
  const read = async (name: string) => {
    const r = await x.get(`SELECT ${COLS} FROM "Repository" WHERE "name" = ?`, name);
    return r ? T.Repository.decode(r) : null;
  };
  const byId = async (id: string) => {
    const r = await x.get(`SELECT ${COLS} FROM "Repository" WHERE "id" = ?`, id);
    return r ? T.Repository.decode(r) : null;
  };
  return {
    byName: async (name: string) => {
      if (h.tx) return read(name);
      const held = cache.get(name);
      // The stamp is taken before the read; the first read cannot know the id yet, so it is kept unstamped (-1 never matches).
      const stamp = held ? h.changes.stamp(held.row.id, "control") : -1;
      if (held && held.stamp === stamp) return held.row;
      const row = await read(name);
      if (row) cache.set(name, { row, stamp: held?.row.id === row.id ? stamp : -1 });
      else cache.delete(name);
      return row;
    },
    byId,
    create: async (data) => {
      await insert(x, T.Repository, data);
      return { goal: "", caseInsensitive: false, claimVersion: 0, ...data };
    },
    createMany: async (rows) => {
      const full = rows.map((data) => ({ claimVersion: 0, ...data }));
      await insertMany(x, T.Repository, full);
      return full;
    },
    setGoal: async (id: string, goal: string) => {
      await x.run(`UPDATE "Repository" SET "goal" = ? WHERE "id" = ?`, goal, id);
      const row = await byId(id);
      if (!row) throw new Error(`No Repository ${id}`);
      touch(id, "control");
      return row;
    },
    list: async () =>
      (await x.all(`SELECT ${COLS} FROM "Repository" ORDER BY "name" ASC`)).map((r) =>
        T.Repository.decode(r),
      ),
    /** The registered repositories of these names, in one statement (a set-up file's: operations/people/setup). */
    named: async (names: string[]) =>
      (
        await x.all(
          `SELECT ${COLS} FROM "Repository" WHERE ${inListSql(x.dialect, `"name"`)}`,
          listParam(x.dialect, names),
        )
      ).map((r) => T.Repository.decode(r)),
    /** Which of these names are registered. */
    known: async (names: string[]) =>
      new Set(
        (
          await x.all(
            `SELECT "name" FROM "Repository" WHERE ${inListSql(x.dialect, `"name"`)}`,
            listParam(x.dialect, names),
          )
        ).map((r) => r.name as string),
      ),
  };
};
