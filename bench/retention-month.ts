import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { createStore, migrate, openDb, DEFAULT_LEASE, type Db } from "@cohent/backend";
import { startSweeper } from "../backend/src/live/sweeper.js";
import { insertMany, T } from "../backend/src/store/sql/tables.js";
import { printed, table } from "./lib.js";
import { replaceSection, runLine } from "./results.js";

/**
 * The retention rule over simulated months (issue 52): a company's rows written a day at a time with
 * that day's timestamps, on SQLite and (when it answers) PostgreSQL, twice: with the rule
 * (COHENT_RETENTION_DAYS=30, the sweeper's own pass run after each day, as its 10-minute timer would)
 * and without it. The database's size after each month and the rows kept. On PostgreSQL the pruned
 * tables are vacuumed after each simulated day, as autovacuum would in a real one; SQLite reuses freed
 * pages by itself ("used" is the file less its free pages). A script run by hand
 * (`npx tsx bench/retention-month.ts`), not part of `npm run bench` or the tests.
 *
 * A company (defaults; env to change): COHENT_BENCH_REPOS repositories × COHENT_BENCH_AGENTS agents,
 * each agent COHENT_BENCH_INTENTS intents a day, each intent: its row and a session a day, 2
 * decisions, 15 packets, 1 notice, 6 change-log events, 1 checkpoint, and a guard catch every other.
 */

const REPOS = Number(process.env.COHENT_BENCH_REPOS ?? 20);
const AGENTS = Number(process.env.COHENT_BENCH_AGENTS ?? 5);
const INTENTS = Number(process.env.COHENT_BENCH_INTENTS ?? 8);
const MONTHS = Number(process.env.COHENT_BENCH_MONTHS ?? 3);
const KEEP_DAYS = 30;
const PG_BASE = process.env.COHENT_BENCH_PG ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const DAY = 86_400_000;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const id = (prefix: string) => `${prefix}_${randomBytes(10).toString("hex")}`;
const words = (n: number) =>
  "rework the cart total and its rounding so checkout agrees ".repeat(8).slice(0, n);

interface Sizes {
  bytes: number;
  used: number;
}

async function sizeOf(db: Db): Promise<Sizes> {
  if (db.provider === "sqlite") {
    const n = async (p: string) => Number(Object.values((await db.read.get(`PRAGMA ${p}`))!)[0]);
    const [pages, free, size] = [await n("page_count"), await n("freelist_count"), await n("page_size")];
    return { bytes: pages * size, used: (pages - free) * size };
  }
  const r = await db.read.get(`SELECT pg_database_size(current_database()) AS "n"`);
  return { bytes: Number(r!.n), used: Number(r!.n) };
}

async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ["Intent", "Event", "Checkpoint", "Decision", "Notice", "Packet", "GuardCatch"])
    out[t] = Number((await db.read.get(`SELECT COUNT(*) AS "n" FROM "${t}"`))!.n);
  return out;
}

/** One simulated day of the whole company, in one transaction a repository. */
async function writeDay(db: Db, day: number, agents: { repoId: string; tokenId: string; person: string }[]) {
  const at = (minute: number) => new Date(T0 + day * DAY + 8 * 3_600_000 + minute * 60_000);
  const byRepo = new Map<string, typeof agents>();
  for (const a of agents) byRepo.set(a.repoId, [...(byRepo.get(a.repoId) ?? []), a]);
  for (const [repoId, team] of byRepo) {
    const rows = {
      sessions: [] as object[],
      intents: [] as object[],
      decisions: [] as object[],
      packets: [] as object[],
      notices: [] as object[],
      events: [] as object[],
      checkpoints: [] as object[],
      catches: [] as object[],
    };
    for (const a of team) {
      const sessionId = id("ses");
      rows.sessions.push({
        id: sessionId,
        repoId,
        tokenId: a.tokenId,
        key: `day-${day}`,
        client: "claude",
        control: "active",
        epoch: 0,
        createdAt: at(0),
        lastSeenAt: at(480),
      });
      for (let i = 0; i < INTENTS; i++) {
        const start = i * 55;
        const intentId = id("wki");
        rows.intents.push({
          id: intentId,
          repoId,
          sessionId,
          person: a.person,
          client: "Claude Code",
          model: "claude-opus",
          prompt: words(300),
          promptPaths: JSON.stringify(["src/cart.ts", "src/checkout.ts"]),
          record: JSON.stringify({
            objective: words(80),
            outputs: ["cart-total"],
            dependsOn: [],
            components: ["cart"],
            plan: [words(60), words(60)],
          }),
          state: "completed",
          lastAction: "proceed",
          createdAt: at(start),
          updatedAt: at(start + 50),
          closedAt: at(start + 50),
        });
        for (let k = 0; k < 2; k++)
          rows.decisions.push({
            id: id("dec"),
            repoId,
            intentId,
            action: k ? "proceed" : "parallel",
            peerIds: JSON.stringify([id("wki")]),
            reason: words(100),
            createdAt: at(start + k),
          });
        for (let k = 0; k < 15; k++)
          rows.packets.push({
            id: id("pkt"),
            repoId,
            intentId,
            sessionId,
            kind: k ? "update" : "plan",
            action: "proceed",
            cursor: k,
            chars: 900,
            tokens: 230,
            peerIds: "[]",
            ackedChars: 900,
            ackedAt: at(start + 3 * k + 1),
            createdAt: at(start + 3 * k),
          });
        rows.notices.push({
          id: id("ntc"),
          repoId,
          intentId,
          sessionId,
          kind: "scope-granted",
          paths: JSON.stringify(["src/cart.ts"]),
          text: words(250),
          waitedMs: 4_000,
          createdAt: at(start + 5),
          toldAt: at(start + 6),
        });
        for (let k = 0; k < 6; k++)
          rows.events.push({
            repoId,
            intentId,
            kind: "intent",
            peerIds: "[]",
            summary: words(80),
            createdAt: at(start + 8 * k),
          });
        rows.checkpoints.push({
          id: id("cp"),
          intentId,
          status: "completed",
          summary: words(120),
          paths: JSON.stringify(["src/cart.ts"]),
          source: "provided-unverified",
          createdAt: at(start + 49),
        });
        if (i % 2 === 0)
          rows.catches.push({
            id: id("gc"),
            repoId,
            intentId,
            agentId: null,
            kind: "outside-scope",
            paths: JSON.stringify(["src/other.ts"]),
            peerIds: "[]",
            detail: JSON.stringify({ rule: "outside-scope" }),
            createdAt: at(start + 20),
          });
      }
    }
    await db.tx(async (x) => {
      await insertMany(x, T.Session, rows.sessions as never[]);
      await insertMany(x, T.Intent, rows.intents as never[]);
      await insertMany(x, T.Decision, rows.decisions as never[]);
      await insertMany(x, T.Packet, rows.packets as never[]);
      await insertMany(x, T.Notice, rows.notices as never[]);
      await insertMany(x, T.Event, rows.events as never[]);
      await insertMany(x, T.Checkpoint, rows.checkpoints as never[]);
      await insertMany(x, T.GuardCatch, rows.catches as never[]);
    });
  }
}

async function simulate(kind: "sqlite" | "postgres", keep: boolean) {
  let url: string;
  let dispose: () => Promise<void>;
  if (kind === "sqlite") {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-retention-"));
    url = `file:${path.join(dir, "cohent.sqlite")}`;
    dispose = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const name = `cohent_retention_${process.pid}_${keep ? "keep" : "all"}`;
    const admin = new pg.Client({ connectionString: PG_BASE });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const u = new URL(PG_BASE);
    u.pathname = `/${name}`;
    url = u.toString();
    dispose = async () => {
      const c = new pg.Client({ connectionString: PG_BASE });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  }
  await migrate(url);
  const db = await openDb(url);
  const store = createStore(db);
  let now = new Date(T0);
  const sweeper = startSweeper(
    { store, clock: () => now, lease: DEFAULT_LEASE, log: pino({ level: "silent" }) },
    3_600_000,
    keep ? KEEP_DAYS : 0,
  );
  sweeper.stop(); // its passes are run below, one a simulated day
  const agents: { repoId: string; tokenId: string; person: string }[] = [];
  await db.tx(async (x) => {
    for (let r = 0; r < REPOS; r++) {
      const repoId = id("rep");
      await insertMany(x, T.Repository, [
        { id: repoId, name: `acme/svc-${r}`, createdAt: new Date(T0) },
      ] as never[]);
      for (let a = 0; a < AGENTS; a++) {
        const tokenId = id("tok");
        const person = `dev${r}-${a}`;
        await insertMany(x, T.AgentToken, [
          {
            id: tokenId,
            repoId,
            person,
            client: "Claude Code",
            tokenHash: randomBytes(32).toString("hex"),
            createdAt: new Date(T0),
          },
        ] as never[]);
        agents.push({ repoId, tokenId, person });
      }
    }
  });
  const out: Record<string, string | number>[] = [];
  const t0 = performance.now();
  let pruneMs = 0;
  for (let month = 1; month <= MONTHS; month++) {
    for (let d = (month - 1) * 30; d < month * 30; d++) {
      await writeDay(db, d, agents);
      now = new Date(T0 + (d + 1) * DAY);
      const p0 = performance.now();
      await sweeper.prune();
      pruneMs += performance.now() - p0;
      // PostgreSQL reuses a deleted row's space once vacuumed: autovacuum (a minute's nap) would run many
      // times in a real day; here the day is seconds long, so it is run as autovacuum would, every day.
      if (kind === "postgres" && keep)
        for (const t of ["Decision", "Notice", "Packet", "GuardCatch"]) await db.read.run(`VACUUM "${t}"`);
    }
    const size = await sizeOf(db);
    const c = await counts(db);
    const row = {
      database: kind,
      rule: keep ? `${KEEP_DAYS} days` : "none",
      month,
      "size MB": (size.bytes / 1e6).toFixed(1),
      ...(kind === "sqlite" ? { "used MB": (size.used / 1e6).toFixed(1) } : { "used MB": "-" }),
      decisions: c.Decision!,
      notices: c.Notice!,
      packets: c.Packet!,
      catches: c.GuardCatch!,
      "intents (kept)": c.Intent!,
      "events (kept)": c.Event!,
    };
    console.error(JSON.stringify(row));
    out.push(row);
  }
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const timing = `${kind} ${keep ? "with" : "without"} the rule: ${seconds} s, of which the sweeper's passes ${(pruneMs / 1000).toFixed(1)} s`;
  console.error(timing);
  timings.push(timing);
  await db.close();
  await dispose();
  return out;
}

async function pgAnswers(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_BASE, connectionTimeoutMillis: 1_500 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

const rows: Record<string, string | number>[] = [];
const timings: string[] = [];
const kinds: ("sqlite" | "postgres")[] = ["sqlite"];
if (process.env.COHENT_BENCH_PG !== "off" && (await pgAnswers())) kinds.push("postgres");
else console.error("PostgreSQL did not answer: SQLite only");
console.error(
  `company: ${REPOS} repositories × ${AGENTS} agents, ${INTENTS} intents an agent a day, ${MONTHS} months of 30 days`,
);
for (const kind of kinds) for (const keep of [false, true]) rows.push(...(await simulate(kind, keep)));
const company = `${REPOS} repositories × ${AGENTS} agents, ${INTENTS} intents an agent a day (each: 2 decisions, 15 packets, 1 notice, 6 events, 1 checkpoint, a guard catch every other), ${MONTHS} months of 30 days`;
table(`Database size after each simulated month, with and without the ${KEEP_DAYS}-day rule`, rows);
replaceSection(
  "bench/retention-month.ts",
  [
    "## The retention rule over simulated months (`npx tsx bench/retention-month.ts`)",
    "",
    runLine(),
    "",
    `A company: ${company}. SQLite's "size" is its pages, "used" those not free; PostgreSQL's is`,
    "`pg_database_size`, its pruned tables vacuumed after each simulated day as autovacuum would. The rule",
    "prunes decisions, notices, packets and guard catches; intents, the change log and checkpoints are kept.",
    "",
    ...printed,
    "",
    ...timings.map((t) => `- ${t}`),
  ].join("\n"),
);
