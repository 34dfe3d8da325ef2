import { printed, table } from "../lib.js";
import { replaceSection, runLine } from "../results.js";
import { postgresDb, sqliteDb, startBareKoa, type Db } from "./procs.js";
import { agentsBaseline, agentsTitle, benchAgents, SCENARIOS } from "./agents.js";
import { benchFlood } from "./flood.js";
import { benchProfile } from "./profile.js";
import { benchRequests, type Row } from "./requests.js";

/**
 * `npm run bench:load`: the server and a bare Koa endpoint each in its own
 * process, driven by the same external generator; every figure next to the
 * baseline measured in the same run. `--profile`: a CPU profile of the server
 * under load instead of the tables; `--only requests|agents|flood`: one section.
 * Knobs (BENCH_LOAD_*, BENCH_AGENTS_*, BENCH_PG_URL): bench/load/README.md.
 */

const argv = process.argv.slice(2);
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
const kinds = (process.env.BENCH_LOAD_DB ?? "sqlite,postgres").split(",");
const rowNames = process.env.BENCH_LOAD_ROWS?.split(",");
/** Section 2's PostgreSQL configurations: how many `cohent serve` share the database. */
const pgInstances = (process.env.BENCH_AGENTS_PG_INSTANCES ?? "1,2").split(",").map(Number);

async function withDb<T>(kind: string, fn: (db: Db) => Promise<T>): Promise<T | null> {
  const db = kind === "postgres" ? await postgresDb() : sqliteDb();
  if (!db) return null;
  try {
    return await fn(db);
  } finally {
    await db.drop();
  }
}

if (argv.includes("--profile") || process.env.BENCH_LOAD_PROFILE === "1") {
  for (const kind of kinds) {
    for (const p of (await withDb(kind, benchProfile)) ?? []) {
      table(`Profile by group, ${p.title}`, p.groups);
      table(`Top self time by package or file, ${p.title}`, p.top);
    }
  }
  process.exit(0);
}

/** The table just printed replaces this section's figures in bench/RESULTS.md (results.ts). */
const record = (section: string) =>
  replaceSection(
    `npm run bench:load -- --only ${section}`,
    [`## \`npm run bench:load -- --only ${section}\``, runLine(), printed.at(-1)!].join("\n\n"),
  );

const bare = await startBareKoa();
try {
  if (!only || only === "requests") {
    const rows = [];
    for (const kind of kinds)
      rows.push(...((await withDb(kind, (db) => benchRequests(db, bare, rowNames))) ?? []));
    table(
      `Hot-path requests, ${process.env.BENCH_LOAD_CONNECTIONS ?? 8} connections from a separate autocannon process, ${process.env.BENCH_LOAD_SECONDS ?? 5} s each`,
      rows,
    );
    record("requests");
  }
  if (!only || only === "agents") {
    const baseline = await agentsBaseline(bare);
    const rows: Row[] = [];
    for (const kind of kinds) {
      for (const instances of kind === "postgres" ? pgInstances : [1])
        for (const scenario of SCENARIOS)
          rows.push(
            ...((await withDb(kind, (db) => benchAgents(db, instances, baseline, scenario === "mix"))) ?? []),
          );
    }
    table(agentsTitle, rows);
    record("agents");
  }
  if (!only || only === "flood") {
    const rows: Row[] = [];
    for (const kind of kinds) rows.push(...((await withDb(kind, (db) => benchFlood(db, bare))) ?? []));
    table(
      "A flood of one token's kill-switch reads (16 connections, rate limit 20/s burst 40) and another token's read, one every 25 ms, p50 of 40",
      rows,
    );
    record("flood");
  }
} finally {
  await bare.stop();
}
process.exit(0);
