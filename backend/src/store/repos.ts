import type { PrismaTx } from "./db.js";
import type { Touch } from "./index.js";

/** Repositories. */
export const repos = (c: PrismaTx, touch: Touch = () => {}) => ({
  byName: (name: string) => c.repository.findUnique({ where: { name } }),
  byId: (id: string) => c.repository.findUnique({ where: { id } }),
  create: (data: { id: string; name: string; goal?: string; caseInsensitive?: boolean; createdAt: Date }) =>
    c.repository.create({ data }),
  setGoal: async (id: string, goal: string) => {
    const row = await c.repository.update({ where: { id }, data: { goal } });
    touch(id, "control");
    return row;
  },
  list: () => c.repository.findMany({ orderBy: { name: "asc" } }),
  /** Which of these names are registered. */
  known: async (names: string[]) =>
    new Set(
      (await c.repository.findMany({ where: { name: { in: names } }, select: { name: true } })).map(
        (r) => r.name,
      ),
    ),
});
