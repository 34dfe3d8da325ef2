import type { PairingView, RepoList, RepoListQuery } from "@cohent/protocol";
import type { Deps } from "../deps.js";

/** How many repositories a GitHub person's visibility is asked about at once (each a cached GitHub call). */
const ASK_AT_ONCE = 8;

/**
 * One page of the repository list. With no visibility rule (a local admin) the database searches,
 * counts and pages. With one (a GitHub person sees only what GitHub says they can push to, which the
 * database cannot know), the database searches and every matching name is asked about, so that the
 * total and every page are exact under the rule; only the page's rows are read.
 */
export async function repositoryPage(
  deps: Deps,
  query: RepoListQuery,
  pending: PairingView[],
  mayUse: ((repo: string) => Promise<boolean>) | null,
): Promise<Omit<RepoList, "pairings">> {
  const { q, page, limit } = query;
  const offset = (page - 1) * limit;
  let total: number;
  let names: string[];
  if (!mayUse) {
    ({ total, names } = await deps.store.repoPages.matching(q, offset, limit));
  } else {
    const all = (await deps.store.repoPages.matching(q, 0, null)).names;
    const seen: boolean[] = new Array<boolean>(all.length);
    let next = 0;
    const worker = async () => {
      while (next < all.length) {
        const i = next++;
        seen[i] = await mayUse(all[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ASK_AT_ONCE, all.length) }, worker));
    const visible = all.filter((_, i) => seen[i]);
    total = visible.length;
    names = visible.slice(offset, offset + limit);
  }
  const rows = await deps.store.repoPages.summaries(names);
  return {
    repos: rows.map((r) => ({
      name: r.name,
      goal: r.goal,
      openIntents: r.openIntents,
      activeTokens: r.activeTokens,
      people: r.people,
      pendingPairings: pending.filter((p) => p.repo === r.name).length,
      lastActivityAt: r.lastActivityAt?.toISOString() ?? null,
    })),
    q,
    page,
    limit,
    total,
    pages: Math.max(1, Math.ceil(total / limit)),
  };
}
