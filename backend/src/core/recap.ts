import type { CommitView, IntentRecord, Recap, RecapItem } from "@cohent/protocol";

/**
 * Recap: a deterministic account of a time window, built only from intents,
 * checkpoints and decisions (no model). Same rows, same window, same text.
 */

/** An intent as the recap reads it: oldest change first, checkpoints oldest first. */
export interface RecapRow {
  id: string;
  person: string;
  client: string | null;
  model: string | null;
  prompt: string;
  record: IntentRecord | null;
  state: string;
  lastAction: string;
  closedAt: Date | null;
  updatedAt: Date;
  scope: string[];
  checkpoints: { summary: string; paths: string[]; commit?: CommitView }[];
}

function item(r: RecapRow): RecapItem {
  const last = r.checkpoints[r.checkpoints.length - 1];
  const paths = new Set([...r.scope, ...r.checkpoints.flatMap((c) => c.paths)]);
  return {
    intentId: r.id,
    person: r.person,
    client: r.client,
    model: r.model,
    objective: r.record?.objective ?? r.prompt.slice(0, 120),
    state: r.state,
    outputs: r.record?.outputs ?? [],
    paths: [...paths].sort(),
    summary: last?.summary || null,
    commits: r.checkpoints.flatMap((c) => (c.commit ? [c.commit] : [])),
    at: (r.closedAt ?? r.updatedAt).toISOString(),
  };
}

/** Sorts each intent into one section: completed, abandoned, blocked, waiting (with who holds what it waits for), in progress. */
export function classify(
  rows: readonly RecapRow[],
): Pick<Recap, "completed" | "blocked" | "waiting" | "inProgress" | "abandoned" | "people"> {
  const owner = new Map<string, { person: string; objective: string }>();
  for (const r of rows) {
    if (r.closedAt) continue;
    for (const o of r.record?.outputs ?? [])
      owner.set(o.toLowerCase(), {
        person: r.person,
        objective: r.record?.objective ?? r.prompt.slice(0, 80),
      });
  }
  const out: ReturnType<typeof classify> = {
    completed: [],
    blocked: [],
    waiting: [],
    inProgress: [],
    abandoned: [],
    people: [],
  };
  for (const r of rows) {
    if (r.state === "completed") out.completed.push(item(r));
    else if (r.state === "abandoned") out.abandoned.push(item(r));
    else if (r.closedAt)
      continue; // superseded by a newer prompt of the same session
    else if (r.state === "blocked") out.blocked.push({ ...item(r), blockers: r.record?.blockers ?? [] });
    else if (r.lastAction === "wait") {
      const dependsOn = r.record?.dependsOn ?? [];
      out.waiting.push({
        ...item(r),
        dependsOn,
        waitingOn: dependsOn.flatMap((d) => owner.get(d.toLowerCase()) ?? []),
      });
    } else out.inProgress.push(item(r));
  }
  out.people = [...new Set(rows.map((r) => r.person))].sort();
  return out;
}

const who = (i: RecapItem) =>
  `${i.person} (${[i.client ?? "unknown client", i.model].filter(Boolean).join(", ")})`;

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
  const opt = (label: string, value: string | null | undefined) => (value ? [`${label}: ${value}`] : []);
  const commits = (i: RecapItem) =>
    i.commits.map((c) => `commit ${c.hash.slice(0, 12)}: ${c.paths.join(", ")}`);
  section("Completed", r.completed, (i) => [
    ...opt("outputs", i.outputs.join(", ")),
    ...opt("paths", i.paths.join(", ")),
    ...commits(i),
    ...opt("summary", i.summary),
  ]);
  section("Blocked", r.blocked, (i) => [
    ...opt("blockers", i.blockers.join("; ")),
    ...opt("last", i.summary),
  ]);
  section("Waiting", r.waiting, (i) => [
    `depends on: ${i.dependsOn.join(", ") || "-"}`,
    ...i.waitingOn.map((w) => `held by ${w.person}: ${w.objective}`),
  ]);
  section("In progress", r.inProgress, (i) => [
    ...opt("paths", i.paths.join(", ")),
    ...commits(i),
    ...opt("last", i.summary),
  ]);
  if (r.abandoned.length) section("Abandoned", r.abandoned, (i) => opt("summary", i.summary));
  lines.push("", `People: ${r.people.join(", ") || "none"}. Human commands: ${r.humanCommands}.`);
  return lines.join("\n");
}
