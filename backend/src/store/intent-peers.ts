import type { Action, IntentRecord } from "@cohent/protocol";
import type { NameLookup } from "../core/resolver-index.js";
import type { ActivePeer, IntentRow } from "./contract.js";
import type { Handle } from "./handle.js";
import { cached } from "./memory.js";
import { activeRows, intentsSql, many, ORDERED } from "./intent-rows.js";
import { list, recordOf, sharedList } from "./rows.js";
import { inListSql, listParam, type Exec } from "./sql/exec.js";

// What the resolver reads of an intent's peers (store/intents `activePeers`,
// `candidates`, `namedPeers`): on every publish and poll, so each read is
// shaped to load as little as it can.

const toPeer = ({ id, place, state, record, lastAction, scope }: IntentRow): ActivePeer => ({
  id,
  place,
  state,
  record,
  lastAction,
  scope,
});

/**
 * `active`'s resolver fields, the record from memory. A record is written only with a new place
 * (`update`: one more than the repository's highest, unique in it), so an intent's place names
 * its record: the read is the short columns of every active intent, and the records of those
 * whose place this store has not seen. Membership and the short columns come from the
 * database each time (a lapsed lease writes no event). Only outside a transaction: a record
 * read inside one may still roll back, and its place be taken again.
 */
export async function activePeers(h: Handle, repoId: string, cutoff: Date): Promise<ActivePeer[]> {
  const { x } = h;
  if (h.tx) return (await activeRows(x, repoId, cutoff)).map(toPeer);
  const heads = await x.all(
    `SELECT i."id", i."place", i."state", i."lastAction", c."paths" AS "claimPaths" FROM "Intent" i JOIN "Session" s ON s."id" = i."sessionId" LEFT JOIN "Claim" c ON c."intentId" = i."id" WHERE i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ? ${ORDERED}`,
    repoId,
    x.time(cutoff),
  );
  const placed = h.mem<string, IntentRecord>("placed");
  const at = (id: unknown, place: unknown) => `${id as string}@${Number(place)}`;
  const records = new Map<string, IntentRecord>();
  const missing: string[] = [];
  for (const r of heads) {
    if (r.place === null) continue;
    const held = placed.get(at(r.id, r.place));
    if (held) records.set(at(r.id, r.place), held);
    else missing.push(r.id as string);
  }
  if (missing.length) {
    const rows = await x.all(
      `SELECT "id", "place", "record" FROM "Intent" WHERE ${inListSql(x.dialect, `"id"`)} AND "place" IS NOT NULL`,
      listParam(x.dialect, missing),
    );
    for (const r of rows) {
      const record = recordOf(r.record as string | null);
      if (!record) continue;
      placed.set(at(r.id, r.place), record);
      records.set(at(r.id, r.place), record);
    }
  }
  const peers: ActivePeer[] = [];
  for (const r of heads) {
    const record = r.place === null ? null : records.get(at(r.id, r.place));
    // Its record written again between the two reads: the whole rows, as `active` reads them.
    if (record === undefined) return (await activeRows(x, repoId, cutoff)).map(toPeer);
    peers.push({
      id: r.id as string,
      place: r.place === null ? null : Number(r.place),
      state: r.state as string,
      record,
      lastAction: r.lastAction as Action,
      scope: sharedList(r.claimPaths as string | null),
    });
  }
  return peers;
}

/** The resolver's candidate peers through the IntentName index: active and completed, oldest first. */
export async function candidates(x: Exec, repoId: string, lookup: NameLookup, cutoff: Date) {
  const { dialect } = x;
  if (dialect === "sqlite") {
    // SQLite: the unary `+` keeps it from walking the repository's intents (it looks up the named ids).
    // Each (kind, name) looked up in the index, the list driving the join (CROSS JOIN keeps that
    // order): one UNION of three IN lists, each merged through temporary B-trees, took ~145 µs
    // with nothing found; this takes ~13.
    const named = `SELECT n."intentId" FROM json_each(?) j CROSS JOIN "IntentName" n ON n."repoId" = ? AND n."kind" = json_extract(j."value", '$[0]') AND n."name" = json_extract(j."value", '$[1]')`;
    const pairs = (kinds: { kind: string; names: string[] }[]) =>
      JSON.stringify(kinds.flatMap((k) => k.names.map((name) => [k.kind, name])));
    const active = lookup.active.length
      ? await many(
          x.all(
            intentsSql(
              dialect,
              `+i."repoId" = ? AND +i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named})`,
              ORDERED,
            ),
            repoId,
            x.time(cutoff),
            pairs(lookup.active),
            repoId,
          ),
        )
      : [];
    const completed = lookup.completed.length
      ? await many(
          x.all(
            intentsSql(
              dialect,
              `+i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named})`,
              ORDERED,
            ),
            repoId,
            pairs([{ kind: "output", names: lookup.completed }]),
            repoId,
          ),
        )
      : [];
    return [...active, ...completed];
  }
  const of = (kind: string) => listParam(dialect, lookup.active.find((k) => k.kind === kind)?.names ?? []);
  const named = (kind: string) =>
    `SELECT "intentId" FROM "IntentName" WHERE "repoId" = ? AND "kind" = '${kind}' AND ${inListSql(dialect, `"name"`)}`;
  // Both sent before either answer is awaited: one round trip.
  const active = many(
    x.all(
      intentsSql(
        dialect,
        `i."repoId" = ? AND i."closedAt" IS NULL AND s."lastSeenAt" >= ? AND i."id" IN (${named("output")} UNION ${named("capability")} UNION ${named("component")})`,
        ORDERED,
      ),
      repoId,
      x.time(cutoff),
      repoId,
      of("output"),
      repoId,
      of("capability"),
      repoId,
      of("component"),
    ),
  );
  const completed = lookup.completed.length
    ? many(
        x.all(
          intentsSql(
            dialect,
            `i."repoId" = ? AND i."state" = 'completed' AND i."id" IN (${named("output")})`,
            ORDERED,
          ),
          repoId,
          repoId,
          listParam(dialect, lookup.completed),
        ),
      )
    : Promise.resolve([]);
  const [a, b] = await Promise.all([active, completed]);
  return [...a, ...b];
}

/**
 * The peers the intent's last decision named, and the oldest lease renewal among those not
 * completed (null: none); outside a transaction, from memory until the repository's events move.
 */
export function namedPeers(h: Handle, intentId: string, repoId: string) {
  const { x } = h;
  return cached.stamped(h, "named", intentId, repoId, "events", async () => {
    const last = await x.get(
      `SELECT "peerIds" FROM "Decision" WHERE "intentId" = ? AND "repoId" = ? ORDER BY "createdAt" DESC LIMIT 1`,
      intentId,
      repoId,
    );
    const named = list(last?.peerIds as string | undefined);
    if (!named.length) return { named, oldestSeen: null };
    const seen = await x.get(
      `SELECT MIN(s."lastSeenAt") AS "at" FROM "Session" s WHERE s."id" IN
          (SELECT i."sessionId" FROM "Intent" i WHERE ${inListSql(x.dialect, `i."id"`)} AND i."state" <> 'completed')`,
      listParam(x.dialect, named),
    );
    return { named, oldestSeen: seen?.at ? new Date(seen.at as string) : null };
  });
}
