import { indexNames } from "../core/resolver-index.js";
import type { Intents } from "./contract.js";
import { commitSource, json } from "./rows.js";
import type { Exec } from "./sql/exec.js";
import { insert, setSql, T } from "./sql/tables.js";

// An intent's writes (store/intents `create`, `update`, `addCheckpoint`): its
// row, the resolver's index of its names (IntentName), its checkpoints.

/** An intent's place (`update`): one more than its repository's highest, an index seek on (repoId, place). */
const PLACE = `"place" = (SELECT COALESCE(MAX(p."place"), 0) + 1 FROM "Intent" p WHERE p."repoId" = "Intent"."repoId")`;

/** Whether the intent's indexed names are exactly `names`. */
async function sameNames(x: Exec, intentId: string, names: readonly { kind: string; name: string }[]) {
  const held = await x.all(`SELECT "kind", "name" FROM "IntentName" WHERE "intentId" = ?`, intentId);
  const wanted = new Set(names.map((n) => `${n.kind}\u0000${n.name}`));
  return (
    held.length === wanted.size &&
    held.every((r) => wanted.has(`${r.kind as string}\u0000${r.name as string}`))
  );
}

export async function create(x: Exec, { at, promptPaths, ...i }: Parameters<Intents["create"]>[0]) {
  await insert(x, T.Intent, { ...i, promptPaths: json(promptPaths), createdAt: at, updatedAt: at });
}

/**
 * Writes the intent's columns. A record also gives it its place in its repository's decisions,
 * one more than the highest there, each time: the caller holds the repository lock (journal
 * `lock`) and decides it next, so places follow the order in which records are decided.
 */
export async function update(x: Exec, id: string, change: Parameters<Intents["update"]>[1]) {
  const { record, usage, ...rest } = change;
  const { sets, args } = setSql(x, {
    ...rest,
    record: record ? json(record) : undefined,
    usage: usage ? json(usage) : undefined,
  });
  if (!sets.length) return;
  if (record) sets.push(PLACE);
  await x.later(`UPDATE "Intent" SET ${sets.join(", ")} WHERE "id" = ?`, [...args, id], 1);
  // The resolver index follows the record, in the same transaction. A record whose names are
  // those already indexed (a new state or objective, the common update) leaves its rows alone:
  // a read instead of a delete and an insert that would rewrite the same index pages.
  const names = record ? indexNames(record) : null;
  if (names && !(await sameNames(x, id, names))) {
    await x.later(`DELETE FROM "IntentName" WHERE "intentId" = ?`, [id]);
    if (names.length) {
      // One statement for every name: one round trip on PostgreSQL.
      if (x.dialect === "sqlite")
        await x.later(
          `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") SELECT i."repoId", json_extract(n."value", '$[0]'), json_extract(n."value", '$[1]'), i."id" FROM "Intent" i, json_each(?) n WHERE i."id" = ?`,
          [JSON.stringify(names.map((n) => [n.kind, n.name])), id],
        );
      else
        await x.later(
          `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") SELECT i."repoId", n.k, n.v, i."id" FROM "Intent" i, unnest(?::text[], ?::text[]) AS n(k, v) WHERE i."id" = ?`,
          [names.map((n) => n.kind), names.map((n) => n.name), id],
        );
    }
  }
}

export async function addCheckpoint(
  x: Exec,
  { at, paths, commit, source, ...cp }: Parameters<Intents["addCheckpoint"]>[0],
) {
  await insert(x, T.Checkpoint, {
    ...cp,
    source: commit ? commitSource(commit) : source,
    paths: paths ? json(paths) : null,
    createdAt: at,
  });
}
