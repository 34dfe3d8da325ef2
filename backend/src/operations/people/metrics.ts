import type { Metrics, MetricsSeries } from "@cohent/protocol";
import { queueWait, refusalsByRule, SERIES, tally, totals } from "../../core/metrics.js";
import type { Deps } from "../deps.js";
import { repoByName } from "../shared/repos.js";
import { sessionCounts } from "./enforcement.js";

/** The coordination metrics of a repository (core/metrics defines each), optionally since an instant. */
export async function metrics(deps: Deps, repoName: string, since?: Date): Promise<Metrics> {
  const repo = await repoByName(deps.store, repoName);
  const rows = await deps.store.reads.metricRows(repo.id, since);
  return {
    repo: repo.name,
    since: since?.toISOString() ?? null,
    ...totals(rows),
    ...queueWait(rows),
    ...(await sessionCounts(deps, repo.id, since)),
  };
}

/** Totals and small time series for the metrics page, from the same rows and the same definitions, and the refusals by rule. */
export async function metricsSeries(
  deps: Deps,
  name: string,
  since: Date,
  buckets = 24,
): Promise<MetricsSeries> {
  const repo = await repoByName(deps.store, name);
  const now = deps.clock();
  const width = Math.max(1, now.getTime() - since.getTime()) / buckets;
  const rows = await deps.store.reads.metricRows(repo.id, since);
  const slot = (d: Date) =>
    Math.min(buckets - 1, Math.max(0, Math.floor((d.getTime() - since.getTime()) / width)));
  const counts = tally(rows, buckets, slot);
  return {
    totals: {
      repo: repo.name,
      since: since.toISOString(),
      ...totals(rows),
      ...queueWait(rows),
      ...(await sessionCounts(deps, repo.id, since)),
    },
    since: since.toISOString(),
    until: now.toISOString(),
    bucketMs: Math.round(width),
    series: Object.fromEntries(
      Object.entries(SERIES).map(([wire, metric]) => [wire, counts[metric]]),
    ) as MetricsSeries["series"],
    refusalsByRule: refusalsByRule(await deps.store.reads.refusalCounts(repo.id, since)),
  };
}
