import { readFileSync, readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentRecord } from "@cohent/protocol";
import { createStore, migrate, openDb, resolve, type Db, type Store } from "@cohent/backend";
import { lookupOf } from "../../backend/src/core/resolver-index.js";
import { toResolverIntent } from "../../backend/src/operations/shared/views.js";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/** A small seeded generator (mulberry32), so a failing room can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Few names in several spellings, so peers collide often and only by folding.
const NAMES = ["api", "API", "Api", "db", "DB", "ui", "auth", "Auth", "queue", "docs"];
const OBJECTIVES = ["Build the api.", "build the API", "Write docs", "Fix auth"];

function recordOf(rnd: () => number): IntentRecord {
  const names = () => {
    const seen = new Set<string>();
    const out: string[] = [];
    for (let n = Math.floor(rnd() * 3); n > 0; n--) {
      const name = NAMES[Math.floor(rnd() * NAMES.length)]!;
      if (seen.has(name.toLowerCase())) continue;
      seen.add(name.toLowerCase());
      out.push(name);
    }
    return out;
  };
  return IntentRecord.parse({
    objective: OBJECTIVES[Math.floor(rnd() * OBJECTIVES.length)],
    components: names(),
    dependsOn: names(),
    deferred: names(),
    outputs: names(),
    requires: names(),
    capabilities: names(),
  });
}

const LAST_ACTIONS = ["proceed", "proceed", "duplicate", "handoff", "wait"];
const ROOMS = 30;

/**
 * The resolver index (IntentName) loads only candidate peers; resolving over
 * them must answer exactly what the scanning resolver answers over every
 * active and completed intent, on a real store, for seeded random rooms.
 */
describe.each(DATABASE_KINDS)("resolver index (%s)", (kind) => {
  let db: Db;
  let store: Store;
  let drop: () => Promise<void>;
  const now = new Date("2026-11-30T12:00:00Z");
  const cutoff = new Date(now.getTime() - 600_000);
  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
    store = createStore(db);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  async function room(r: number) {
    const rnd = random(1000 + r);
    const repoId = `rep_${r}`;
    const p = db.prisma;
    await p.repository.create({ data: { id: repoId, name: `acme/${r}`, createdAt: now } });
    await p.agentToken.create({
      data: { id: `tok_${r}`, repoId, person: "ada", tokenHash: `h${r}`, createdAt: now },
    });
    // A live session and one whose lease lapsed.
    for (const [s, seen] of [
      ["live", now],
      ["lapsed", new Date(cutoff.getTime() - 1)],
    ] as const)
      await p.session.create({
        data: {
          id: `ses_${r}_${s}`,
          repoId,
          tokenId: `tok_${r}`,
          key: `${r}${s}`,
          createdAt: now,
          lastSeenAt: seen,
        },
      });
    const ids: string[] = [];
    const count = 4 + Math.floor(rnd() * 10);
    for (let i = 0; i < count; i++) {
      const id = `wki_${r}_${i}`;
      ids.push(id);
      const at = new Date(now.getTime() - 100_000 + Math.floor(rnd() * 5) * 1000);
      const fate = rnd();
      await store.tx(async (t) => {
        await t.intents.create({
          id,
          repoId,
          sessionId: `ses_${r}_${rnd() < 0.8 ? "live" : "lapsed"}`,
          person: "ada",
          client: null,
          model: null,
          prompt: "p",
          promptPaths: [],
          at,
        });
        if (rnd() < 0.1) return; // no record yet
        let record = recordOf(rnd);
        await t.intents.update(id, { record, state: "working", updatedAt: at });
        // Some revise their record: the index must follow the latest, with new names or the same ones.
        if (rnd() < 0.3) await t.intents.update(id, { record: (record = recordOf(rnd)), updatedAt: at });
        if (rnd() < 0.3)
          await t.intents.update(id, { record: { ...record, objective: "revised" }, updatedAt: at });
        const lastAction = LAST_ACTIONS[Math.floor(rnd() * LAST_ACTIONS.length)]!;
        if (fate < 0.2) await t.intents.update(id, { state: "completed", closedAt: at, lastAction });
        else if (fate < 0.3) await t.intents.update(id, { state: "abandoned", closedAt: at, lastAction });
        else await t.intents.update(id, { lastAction });
      });
    }
    return { repoId, ids };
  }

  it(`the indexed and the scanning resolver agree on ${ROOMS} random rooms`, async () => {
    let cases = 0;
    let matched = 0;
    for (let r = 0; r < ROOMS; r++) {
      const { repoId, ids } = await room(r);
      await store.tx(async (t) => {
        const all = [
          ...(await t.intents.active(repoId, cutoff)),
          ...(await t.intents.completed(repoId, 10_000)),
        ];
        for (const id of ids) {
          const me = (await t.intents.get(id))!;
          if (!me.record) continue;
          const scanned = resolve(toResolverIntent(me), all.filter((i) => i.id !== id).map(toResolverIntent));
          const candidates = await t.intents.candidates(repoId, lookupOf(me.record), cutoff);
          const indexed = resolve(toResolverIntent(me), candidates.map(toResolverIntent));
          expect(indexed, `room ${r}, ${id}`).toEqual(scanned);
          // Candidates are a subset of what the scan sees, never more.
          for (const c of candidates) expect(all.map((i) => i.id)).toContain(c.id);
          cases++;
          if (scanned.rule !== "none") matched++;
        }
      });
    }
    expect(cases).toBeGreaterThanOrEqual(200);
    expect(matched).toBeGreaterThan(cases / 4); // the rooms exercise the rules, not just "proceed"
  }, 180_000); // a few hundred cases; PostgreSQL through Prisma takes ~45 s of it

  it("the newest active intents (a publish packet's peers), prepared and through Prisma, are the scan's", async () => {
    let seen = 0;
    for (let r = 0; r < 10; r++) {
      const { repoId } = await room(ROOMS + r);
      // The scan as publish did it: every active intent, newest first, ties oldest first (a stable sort).
      const scanned = (await store.intents.active(repoId, cutoff))
        .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
        .map((i) => i.id);
      seen += scanned.length;
      for (const take of [1, 2, scanned.length + 5]) {
        const prepared = await store.tx((t) => t.intents.recent(repoId, cutoff, take));
        const prisma = await store.intents.recent(repoId, cutoff, take);
        expect(
          prepared.map((i) => i.id),
          `room ${r}, ${take}`,
        ).toEqual(scanned.slice(0, take));
        expect(
          prisma.map((i) => i.id),
          `room ${r}, ${take}`,
        ).toEqual(scanned.slice(0, take));
      }
    }
    expect(seen).toBeGreaterThan(15); // the rooms hold active intents to order
  });

  it("the migration's SQL backfill rebuilds exactly the rows the server writes", async () => {
    const rows = async () =>
      (
        await db.prisma.intentName.findMany({
          orderBy: [{ intentId: "asc" }, { kind: "asc" }, { name: "asc" }],
        })
      ).map((n) => `${n.repoId} ${n.intentId} ${n.kind} ${n.name}`);
    const written = await rows();
    expect(written.length).toBeGreaterThan(100);
    const dir = `prisma/${kind}/migrations`;
    const folder = readdirSync(dir).find((f) => f.endsWith("_intent_names"))!;
    const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
    const backfill = sql.slice(sql.search(/^INSERT/m)); // the last statement
    await db.prisma.intentName.deleteMany({});
    await db.prisma.$executeRawUnsafe(backfill.trim().replace(/;$/, ""));
    expect(await rows()).toEqual(written);
  });

  it("the place migration's backfill places each repository's recorded intents in publish order", async () => {
    const dir = `prisma/${kind}/migrations`;
    const folder = readdirSync(dir).find((f) => f.endsWith("_intent_place"))!;
    const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
    const backfill = sql.slice(sql.search(/^UPDATE/m), sql.search(/^CREATE UNIQUE INDEX/m));
    await db.prisma.intent.updateMany({ data: { place: null } });
    await db.prisma.$executeRawUnsafe(backfill.trim().replace(/;$/, ""));
    const placed = await db.prisma.intent.findMany({
      orderBy: [{ repoId: "asc" }, { createdAt: "asc" }, { id: "asc" }],
      select: { repoId: true, record: true, place: true },
    });
    const next = new Map<string, number>();
    const expected = placed.map((i) => {
      if (!i.record) return null;
      const n = (next.get(i.repoId) ?? 0) + 1;
      next.set(i.repoId, n);
      return n;
    });
    expect(placed.filter((i) => !i.record).length).toBeGreaterThan(0);
    expect(placed.map((i) => i.place)).toEqual(expected);
  });
});
