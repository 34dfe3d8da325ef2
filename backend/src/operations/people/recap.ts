import type { Recap } from "@cohent/protocol";
import { classify } from "../../core/recap.js";
import type { Deps } from "../deps.js";
import { repoByName } from "../shared/repos.js";

export { renderRecap } from "../../core/recap.js";

/** The recap of a repository since an instant (core/recap classifies). */
export async function recap(deps: Deps, repoName: string, since: Date): Promise<Recap> {
  const repo = await repoByName(deps.store, repoName);
  const until = deps.clock();
  const rows = await deps.store.reads.recapIntents(repo.id, since);
  const humanCommands = await deps.store.reads.commandCount(repo.id, since);
  return {
    repo: repo.name,
    since: since.toISOString(),
    until: until.toISOString(),
    ...classify(rows),
    humanCommands,
  };
}
