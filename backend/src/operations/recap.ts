import { CohentError } from "@cohent/protocol";
import { RepoName } from "./admin.js";
import type { Deps } from "./deps.js";
import { parseJson } from "./json.js";
import { recordOf } from "./views.js";

/**
 * Recap: a deterministic account of a time window, built only from intents,
 * checkpoints and decisions (no model). Same store, same window, same text.
 */

export interface RecapItem {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string;
  state: string;
  outputs: string[];
  paths: string[];
  summary: string | null;
  at: string;
}
export interface Recap {
  repo: string;
  since: string;
  until: string;
  completed: RecapItem[];
  blocked: (RecapItem & { blockers: string[] })[];
  waiting: (RecapItem & { dependsOn: string[]; waitingOn: { person: string; objective: string }[] })[];
  inProgress: RecapItem[];
  abandoned: RecapItem[];
  people: string[];
  humanCommands: number;
}

export async function recap(deps: Deps, repoName: string, since: Date): Promise<Recap> {
  const p = deps.db.prisma;
  const repo = await p.repository.findUnique({ where: { name: RepoName.parse(repoName) } });
  if (!repo) throw new CohentError("REPOSITORY_NOT_FOUND", `No repository ${repoName}.`);
  const until = deps.clock();
  const rows = await p.intent.findMany({
    where: { repoId: repo.id, OR: [{ closedAt: null }, { closedAt: { gte: since } }], updatedAt: { gte: since } },
    include: { claim: true, checkpoints: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] } },
    orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
  });
  // Open work that is blocked or waiting stays in the recap even when it did not change in the window.
  const stalled = await p.intent.findMany({
    where: { repoId: repo.id, closedAt: null, updatedAt: { lt: since }, OR: [{ state: "blocked" }, { lastAction: "wait" }] },
    include: { claim: true, checkpoints: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] } },
    orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
  });
  const all = [...stalled, ...rows];
  const outputsOwner = new Map<string, { person: string; objective: string }>();
  for (const r of all) for (const o of recordOf(r)?.outputs ?? []) if (!r.closedAt) outputsOwner.set(o.toLowerCase(), { person: r.person, objective: recordOf(r)?.objective ?? r.prompt.slice(0, 80) });

  const item = (r: (typeof all)[number]): RecapItem => {
    const record = recordOf(r);
    const last = r.checkpoints[r.checkpoints.length - 1];
    const paths = new Set<string>([...parseJson<string[]>(r.claim?.paths, []), ...r.checkpoints.flatMap((c) => parseJson<string[]>(c.paths, []))]);
    return {
      intentId: r.id, person: r.person, client: r.client, model: r.model, objective: record?.objective ?? r.prompt.slice(0, 120), state: r.state,
      outputs: record?.outputs ?? [], paths: [...paths].sort(), summary: last?.summary || null, at: (r.closedAt ?? r.updatedAt).toISOString(),
    };
  };
  const result: Recap = {
    repo: repo.name, since: since.toISOString(), until: until.toISOString(),
    completed: [], blocked: [], waiting: [], inProgress: [], abandoned: [], people: [], humanCommands: 0,
  };
  for (const r of all) {
    const record = recordOf(r);
    if (r.state === "completed") result.completed.push(item(r));
    else if (r.state === "abandoned") result.abandoned.push(item(r));
    else if (r.closedAt) continue; // superseded by a newer prompt of the same session
    else if (r.state === "blocked") result.blocked.push({ ...item(r), blockers: record?.blockers ?? [] });
    else if (r.lastAction === "wait") {
      const dependsOn = record?.dependsOn ?? [];
      result.waiting.push({ ...item(r), dependsOn, waitingOn: dependsOn.flatMap((d) => outputsOwner.get(d.toLowerCase()) ?? []) });
    } else result.inProgress.push(item(r));
  }
  result.people = [...new Set(all.map((r) => r.person))].sort();
  result.humanCommands = await p.command.count({ where: { repoId: repo.id, createdAt: { gte: since } } });
  return result;
}

const who = (i: RecapItem) => `${i.person} (${[i.client ?? "unknown client", i.model].filter(Boolean).join(", ")})`;

/** The text form `cohent recap` prints and the console shows. */
export function renderRecap(r: Recap): string {
  const lines = [`Recap of ${r.repo} from ${r.since} to ${r.until}`];
  const section = <T extends RecapItem>(title: string, items: T[], extra: (i: T) => string[]) => {
    lines.push("", `${title} (${items.length})`);
    if (items.length === 0) lines.push("  none");
    for (const i of items) {
      lines.push(`  - ${i.objective} — ${who(i)}`);
      for (const e of extra(i)) lines.push(`      ${e}`);
    }
  };
  section("Completed", r.completed, (i) => [
    ...(i.outputs.length ? [`outputs: ${i.outputs.join(", ")}`] : []),
    ...(i.paths.length ? [`paths: ${i.paths.join(", ")}`] : []),
    ...(i.summary ? [`summary: ${i.summary}`] : []),
  ]);
  section("Blocked", r.blocked, (i) => [...(i.blockers.length ? [`blockers: ${i.blockers.join("; ")}`] : []), ...(i.summary ? [`last: ${i.summary}`] : [])]);
  section("Waiting", r.waiting, (i) => [
    `depends on: ${i.dependsOn.join(", ") || "-"}`,
    ...i.waitingOn.map((w) => `held by ${w.person}: ${w.objective}`),
  ]);
  section("In progress", r.inProgress, (i) => [...(i.paths.length ? [`paths: ${i.paths.join(", ")}`] : []), ...(i.summary ? [`last: ${i.summary}`] : [])]);
  if (r.abandoned.length) section("Abandoned", r.abandoned, (i) => (i.summary ? [`summary: ${i.summary}`] : []));
  lines.push("", `People: ${r.people.join(", ") || "none"}. Human commands: ${r.humanCommands}.`);
  return lines.join("\n");
}
