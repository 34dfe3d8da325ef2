import { CohentError, RepoName } from "@cohent/protocol";
import type { Repo, Tx } from "../../store/index.js";

/** The one way to look a repository up by name: a bad name is INVALID_INPUT, an unknown one REPOSITORY_NOT_FOUND. */
export async function repoByName(t: Pick<Tx, "repos">, name: string): Promise<Repo> {
  const repo = await t.repos.byName(RepoName.parse(name));
  if (!repo) throw new CohentError("REPOSITORY_NOT_FOUND", `No repository ${name}.`);
  return repo;
}
