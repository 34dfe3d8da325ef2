import type { PrismaTx } from "./db.js";

/** Repositories. */
export const repos = (c: PrismaTx) => ({
  byName: (name: string) => c.repository.findUnique({ where: { name } }),
  create: (data: { id: string; name: string; goal?: string; caseInsensitive?: boolean; createdAt: Date }) => c.repository.create({ data }),
  setGoal: (id: string, goal: string) => c.repository.update({ where: { id }, data: { goal } }),
  list: () => c.repository.findMany({ orderBy: { name: "asc" } }),
  /** Which of these names are registered. */
  known: async (names: string[]) =>
    new Set((await c.repository.findMany({ where: { name: { in: names } }, select: { name: true } })).map((r) => r.name)),
});
