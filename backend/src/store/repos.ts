import type { PrismaTx } from "./db.js";
import type { Repo } from "./rows.js";

export interface Repos {
  byName(name: string): Promise<Repo | null>;
  create(r: { id: string; name: string; goal?: string; caseInsensitive?: boolean; createdAt: Date }): Promise<Repo>;
  setGoal(id: string, goal: string): Promise<Repo>;
  list(): Promise<Repo[]>;
  /** Which of these names are registered. */
  known(names: string[]): Promise<Set<string>>;
}

export const repos = (c: PrismaTx): Repos => ({
  byName: (name) => c.repository.findUnique({ where: { name } }),
  create: (data) => c.repository.create({ data }),
  setGoal: (id, goal) => c.repository.update({ where: { id }, data: { goal } }),
  list: () => c.repository.findMany({ orderBy: { name: "asc" } }),
  known: async (names) =>
    new Set((await c.repository.findMany({ where: { name: { in: names } }, select: { name: true } })).map((r) => r.name)),
});
