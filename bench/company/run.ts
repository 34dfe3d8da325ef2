import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { percentile, printed, table } from "../lib.js";
import { summarize } from "../load/profile.js";
import { cohent, cpuMs, postgresDb, startCohent, type Db, type Proc } from "../load/procs.js";
import { replaceSection, runLine } from "../results.js";

/**
 * `npm run bench:company`: a company running one Cohent for all its repositories. Two `cohent serve`
 * instances on one fresh PostgreSQL database, N repositories × M agents (5), each agent with its own
 * token and session, driven from separate generator processes (generator.mjs) over keep-alive
 * connections, half the agents on each instance. Each agent keeps a long-poll open, reads its kill switch
 * every ~5 s and checkpoints every ~30 s; a person pauses agents on the second instance through the
 * first one's console API, and the time until the paused agent's long-poll answers is the wake.
 * One row per size (500, 1,000, 2,000, 5,000 agents), each on a fresh database and fresh servers:
 * latencies, misses, CPU per request of the servers and of PostgreSQL apart, memory per agent, the
 * machine's load. Knobs: bench/company/README.md.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const SIZES = (env.BENCH_COMPANY_AGENTS ?? "500,1000,2000,5000").split(",").map(Number);
const PER_REPO = Number(env.BENCH_COMPANY_PER_REPO ?? 5);
const SECONDS = Number(env.BENCH_COMPANY_SECONDS ?? 60);
const GENERATORS = Number(env.BENCH_COMPANY_GENERATORS ?? 2);
const SETUP_SECONDS = Number(env.BENCH_COMPANY_SETUP_SECONDS ?? 300);
const PACE = {
  readMs: Number(env.BENCH_COMPANY_READ_MS ?? 5000),
  writeMs: Number(env.BENCH_COMPANY_WRITE_MS ?? 30000),
  waitSeconds: Number(env.BENCH_COMPANY_WAIT_SECONDS ?? 30),
  /** A read or write not answered within this is cut and counted as a miss. */
  timeoutMs: Number(env.BENCH_COMPANY_TIMEOUT_MS ?? 30000),
};
const PAUSE = {
  everyMs: Number(env.BENCH_COMPANY_PAUSE_MS ?? 1000),
  /** A pause whose long-poll has not answered within this is a miss ("not woken"). */
  timeoutMs: Number(env.BENCH_COMPANY_PAUSE_TIMEOUT_MS ?? 15000),
};
const INSTANCES = 2;
/** `--profile`: the servers under `node --cpu-prof`; their self time in the window, by group and by package or file, instead of the section. */
const PROFILE = process.argv.includes("--profile");
/** Each profiled size's self time (ms) by group and by package or file, both servers together, and the requests answered. */
const profiles: {
  agents: number;
  requests: number;
  groups: Map<string, number>;
  items: Map<string, { group: string; ms: number }>;
  totalMs: number;
}[] = [];

interface GeneratorResult {
  elapsed: number;
  reads: number[];
  writes: number[];
  polls: number;
  answered: number;
  pauseCalls: number[];
  wakes: number[];
  misses: Record<string, number>;
  notes: Record<string, number>;
}

/**
 * PostgreSQL's CPU over a window, for one database: its backends', and the cluster's own processes' (writers,
 * checkpointer: shared), other databases' backends left out. The servers' pools open and close connections
 * (a backend takes its CPU time with it when it exits), so /proc is sampled every 250 ms and each backend
 * counts from its first sample (0 for one that started in the window) to its last: a lower bound, short by
 * what a backend used in its last 250 ms.
 */
function postgresCpu(database: string) {
  const seen = new Map<number, { kind: "backends" | "cluster"; from: number; to: number }>();
  let first = true;
  const sample = () => {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      try {
        const known = seen.get(pid);
        if (known) {
          known.to = cpuMs(pid);
          continue;
        }
        if (!readFileSync(`/proc/${pid}/stat`, "utf8").includes(" (postgres) ")) continue;
        const title = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        // A backend's title: "postgres: <cluster>: <user> <database> <host> <state>".
        const kind = title.includes(` ${database} `)
          ? "backends"
          : /^postgres: [^:]+: \S+ \S+ \d/.test(title)
            ? null // another database's backend
            : "cluster";
        const ms = cpuMs(pid);
        if (kind) seen.set(pid, { kind, from: first ? ms : 0, to: ms });
      } catch {
        /* gone meanwhile */
      }
    }
    first = false;
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const out = { backends: 0, cluster: 0 };
      for (const p of seen.values()) out[p.kind] += p.to - p.from;
      return out;
    },
  };
}

/** A process's system CPU time so far, in ms (its user time is cpuMs less this). */
const systemMs = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[12]) * 10;

/** One query on the bench's database, on a connection of its own (not measured: before and after the window). */
async function query(db: Db, sql: string, params: unknown[] = []) {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: db.env.DATABASE_URL });
  try {
    await c.connect();
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

/** The database's committed and rolled-back transactions so far (pg_stat_database, flushed about every second). */
const transactions = (db: Db, database: string) =>
  query(db, "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1", [
    database,
  ]).then(
    (rows) => Number(rows[0]?.n ?? NaN),
    () => NaN,
  );

/** BENCH_COMPANY_TABLES=1: each table's index scans, sequential scans, inserts and updates so far (pg_stat_user_tables). */
const tableStats = async (db: Db) =>
  new Map(
    (
      await query(
        db,
        "SELECT relname, coalesce(idx_scan, 0) AS i, seq_scan AS s, n_tup_ins AS n, n_tup_upd AS u FROM pg_stat_user_tables",
      )
    ).map((x) => [x.relname as string, [x.i, x.s, x.n, x.u].map(Number)]),
  );

const rssKb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
const machineTicks = () => {
  const t = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const all = t.reduce((a, b) => a + b, 0);
  return { busy: all - t[3]! - t[4]!, all };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The company's repositories and one token per agent (person `dev-<j>` of its repository), each kind in one
 * `cohent … --file` call: the admin CLI's set-up files, one process and one transaction each.
 */
async function setupCompany(db: Db, agents: number, step: string) {
  const repos = Math.ceil(agents / PER_REPO);
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-company-"));
  try {
    const names = Array.from({ length: repos }, (_, r) => `company/repo-${r}`);
    writeFileSync(path.join(dir, "repos.txt"), names.join("\n") + "\n");
    await cohent(db, "repo", "add", "--file", path.join(dir, "repos.txt"));
    const lines = Array.from({ length: agents }, (_, i) =>
      JSON.stringify({
        repo: names[Math.floor(i / PER_REPO)],
        person: `dev-${i % PER_REPO}`,
        client: "bench",
      }),
    );
    writeFileSync(path.join(dir, "agents.jsonl"), lines.join("\n") + "\n");
    const issued = (await cohent(db, "token", "issue", "--file", path.join(dir, "agents.jsonl")))
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; token: string });
    const slots = issued.map(({ line, token }) => {
      const i = line - 1;
      const r = Math.floor(i / PER_REPO);
      return { token, key: `${step}-r${r}-a${i % PER_REPO}`, target: i % INSTANCES };
    });
    if (slots.length !== agents)
      throw new Error(`token issue --file gave ${slots.length} of ${agents} tokens`);
    return { repos, slots };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The one-time Control Room link a server prints to its log at start, without GitHub configured. */
async function loginLink(server: Proc): Promise<string> {
  for (let tries = 0; tries < 100; tries++) {
    const m = /Control Room sign-in \(one-time link\): (\S+)/.exec(readFileSync(server.log, "utf8"));
    if (m) return m[1]!;
    await sleep(100);
  }
  throw new Error("no sign-in link in the server's log within 10 s");
}

/** A person signed in to the Control Room of one instance: its cookie and CSRF token. */
async function signIn(base: string, link: string) {
  const res = await fetch(link.replace(/^https?:\/\/[^/]+/, base), { redirect: "manual" });
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const me = (await (await fetch(`${base}/api/console/me`, { headers: { cookie } })).json()) as any;
  if (!me.data?.signedIn) throw new Error("console sign-in failed");
  return { cookie, csrf: me.data.csrfToken as string };
}

interface Generator {
  child: ChildProcess;
  ready: Promise<{ ready: number; of: number; setupMs: number } | null>;
  result: Promise<GeneratorResult | null>;
}

/** A generator process; its spec goes in a file of `dir` (thousands of tokens are past an argument's limit). */
function startGenerator(spec: { id: number; [more: string]: unknown }, dir: string): Generator {
  const envNoOpts = { ...process.env };
  delete envNoOpts.NODE_OPTIONS;
  const file = path.join(dir, `generator-${spec.id}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const child = spawn(process.execPath, [path.join(here, "generator.mjs"), file], {
    env: envNoOpts,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiters: ((line: string | null) => void)[] = [];
  let buf = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buf += chunk.toString();
    let nl;
    while ((nl = buf.indexOf("\n")) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  // "close", not "exit": a process can exit before its last line (a result of megabytes) is read.
  let closed = false;
  child.once("close", () => {
    closed = true;
    for (const w of waiters.splice(0)) w(null);
  });
  const nextLine = () =>
    new Promise<string | null>((resolve) => {
      if (lines.length) return resolve(lines.shift()!);
      if (closed) return resolve(null);
      waiters.push(resolve);
    });
  const parse = <T>(line: string | null): T | null => {
    if (line === null)
      process.stderr.write(
        `bench:company: generator ${spec.id} closed its output early (exit ${child.exitCode}, signal ${child.signalCode})\n`,
      );
    try {
      return line ? (JSON.parse(line) as T) : null;
    } catch {
      process.stderr.write(
        `bench:company: generator ${spec.id} printed ${line!.length} characters: ${line!.slice(0, 300)}\n`,
      );
      return null;
    }
  };
  const ready = nextLine().then((l) => parse<{ ready: number; of: number; setupMs: number }>(l));
  const result = ready.then(async () => parse<GeneratorResult>(await nextLine()));
  return { child, ready, result };
}

const bounded = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
  Promise.race([p, sleep(ms).then(() => null)]);
const ms = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? "-" : x < 10 ? x.toFixed(1) : x.toFixed(0);
const msOrS = (x: number | undefined) =>
  x !== undefined && x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${ms(x)} ms`;

type Row = Record<string, string>;

/** What a step started and has not stopped yet: run on exit, on error and on SIGINT/SIGTERM. */
const cleanups = new Set<() => Promise<void>>();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    process.stderr.write(`bench:company: ${signal}, stopping what it started\n`);
    void Promise.allSettled([...cleanups].map((c) => c())).then(() => process.exit(130));
  });

async function step(agents: number): Promise<{ row: Row; detail: string }> {
  const label = `c${agents}`;
  const row: Row = {
    agents: agents.toLocaleString("en"),
    repos: String(Math.ceil(agents / PER_REPO)),
    "read p50 / p99": "not measurable",
    "write p50 / p99": "not measurable",
    "pause wakes long-poll p50 / p99 (n)": "not measurable",
    misses: "-",
    "req/s": "-",
    "CPU ms/req servers / PG": "-",
    "CPU % of a core: servers / PG / generators": "-",
    "RSS/agent": "-",
    "load (1 min) / busy": "-",
    setup: "-",
  };
  const db = await postgresDb();
  if (!db) throw new Error("bench:company needs PostgreSQL (BENCH_PG_URL)");
  const database = new URL(db.env.DATABASE_URL!).pathname.slice(1);
  const servers: Proc[] = [];
  const generators: Generator[] = [];
  const notes: string[] = [];
  const specDir = mkdtempSync(path.join(os.tmpdir(), "cohent-company-spec-"));
  const profDir = PROFILE ? mkdtempSync(path.join(os.tmpdir(), "cohent-company-prof-")) : null;
  const window: [number, number] = [0, 0];
  let requests = 0;
  const cleanup = async () => {
    for (const g of generators) if (g.child.exitCode === null) g.child.kill("SIGKILL");
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop().catch((err) => process.stderr.write(`bench:company: drop failed: ${err.message}\n`));
    rmSync(specDir, { recursive: true, force: true });
  };
  cleanups.add(cleanup);
  try {
    const t0 = performance.now();
    const company = await setupCompany(db, agents, label);
    const filesSeconds = (performance.now() - t0) / 1000;
    for (let i = 0; i < INSTANCES; i++)
      // Each server writes its own log file (no pipe through this process): an access-log line per request.
      servers.push(await startCohent(db, profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [], true));
    const idleRss = servers.reduce((s, p) => s + rssKb(p.pid), 0);
    const person = await signIn(servers[0]!.url, await loginLink(servers[0]!));
    const targets = servers.map((s) => s.url);
    const t1 = performance.now();
    for (let g = 0; g < GENERATORS; g++)
      generators.push(
        startGenerator(
          {
            id: g,
            targets,
            // Agent i on instance i % 2; the generators take pairs in turn, so each has agents on both.
            agents: company.slots.filter((_, i) => Math.floor(i / INSTANCES) % GENERATORS === g),
            seconds: SECONDS,
            setupSeconds: SETUP_SECONDS,
            setupConcurrency: 16,
            ...PACE,
            pause: g === 0 ? { console: targets[0], ...person, ...PAUSE } : null,
          },
          specDir,
        ),
      );
    const ready = await Promise.all(generators.map((g) => bounded(g.ready, (SETUP_SECONDS + 60) * 1000)));
    const httpSeconds = (performance.now() - t1) / 1000;
    const live = ready.reduce((n, r) => n + (r?.ready ?? 0), 0);
    row.setup = `${filesSeconds.toFixed(1)} s files + ${httpSeconds.toFixed(0)} s HTTP`;
    if (live < agents) notes.push(`${agents - live} agents not set up within ${SETUP_SECONDS} s`);

    // A backend reports its statistics at most once a second, an idle one within 10 s (PostgreSQL 15): the
    // setup's settle first, with the long-polls open.
    await sleep(11_000);
    const xactsBefore = await transactions(db, database);
    const tablesBefore = env.BENCH_COMPANY_TABLES === "1" ? await tableStats(db) : null;
    const pgCpu = postgresCpu(database);
    const serversBefore = servers.map((s) => cpuMs(s.pid));
    const systemBefore = servers.map((s) => systemMs(s.pid));
    const generatorsBefore = generators.map((g) => cpuMs(g.child.pid!));
    const machineBefore = machineTicks();
    for (const g of generators) g.child.stdin!.write("go\n");
    const start = performance.now();
    window[0] = Number(process.hrtime.bigint() / 1000n); // V8 stamps samples with the same monotonic clock, in µs
    await sleep(SECONDS * 1000);
    const elapsed = (performance.now() - start) / 1000;
    window[1] = Number(process.hrtime.bigint() / 1000n);
    const { backends: pg, cluster: pgCluster } = pgCpu.stop();
    const serverCpu = servers.reduce((s, p, i) => s + cpuMs(p.pid) - serversBefore[i]!, 0);
    const serverSystem = servers.reduce((s, p, i) => s + systemMs(p.pid) - systemBefore[i]!, 0);
    const generatorCpu = generators.reduce((s, g, i) => s + cpuMs(g.child.pid!) - generatorsBefore[i]!, 0);
    const machineAfter = machineTicks();
    const rss = servers.reduce((s, p) => s + rssKb(p.pid), 0);
    const load = os.loadavg()[0]!;

    // The statistics of the window's last second reach pg_stat_database within about a second.
    const xacts = (await sleep(1500).then(() => transactions(db, database))) - xactsBefore;
    if (tablesBefore) {
      const after = await tableStats(db);
      const perSecond = (x: number) => (x / elapsed).toFixed(1);
      const tables = [...after]
        .map(([name, v]) => [name, v.map((x, i) => x - (tablesBefore.get(name)?.[i] ?? 0))] as const)
        .filter(([, d]) => d.some((x) => x > 0))
        .sort((a, b) => b[1][0]! - a[1][0]!)
        .map(([name, d]) => `${name}: ${d.map(perSecond).join(" / ")}`);
      process.stderr.write(
        `${agents} agents, per second in the window: index scans / sequential scans / inserts / updates\n  ${tables.join("\n  ")}\n`,
      );
    }
    const results = await Promise.all(
      generators.map((g) => bounded(g.result, (PACE.timeoutMs + 30_000) as number)),
    );
    const done = results.filter((r): r is GeneratorResult => !!r);
    if (done.length < generators.length)
      notes.push(`${generators.length - done.length} generator(s) gave no result`);
    const all = <K extends "reads" | "writes" | "wakes" | "pauseCalls">(k: K) => done.flatMap((r) => r[k]);
    const reads = all("reads");
    const writes = all("writes");
    const wakes = all("wakes");
    const answered = done.reduce((n, r) => n + r.answered, 0);
    requests = answered;
    const misses: Record<string, number> = {};
    const notesCount: Record<string, number> = {};
    for (const r of done) {
      for (const [k, v] of Object.entries(r.misses)) misses[k] = (misses[k] ?? 0) + v;
      for (const [k, v] of Object.entries(r.notes)) notesCount[k] = (notesCount[k] ?? 0) + v;
    }
    const missTotal = Object.entries(misses)
      .filter(([k]) => !k.startsWith("setup "))
      .reduce((n, [, v]) => n + v, 0);
    const pct = (xs: number[]) =>
      xs.length ? `${ms(percentile(xs, 50))} / ${ms(percentile(xs, 99))} ms` : "not measurable";
    row["read p50 / p99"] = pct(reads);
    row["write p50 / p99"] = pct(writes);
    row["pause wakes long-poll p50 / p99 (n)"] = wakes.length
      ? `${msOrS(percentile(wakes, 50))} / ${msOrS(percentile(wakes, 99))} (${wakes.length})`
      : "not measurable";
    row.misses = missTotal.toLocaleString("en");
    row["req/s"] = (answered / elapsed).toFixed(0);
    row["CPU ms/req servers / PG"] = answered
      ? `${(serverCpu / answered).toFixed(2)} / ${((pg + pgCluster) / answered).toFixed(2)}`
      : "not measurable";
    const core = (x: number) => ((x / elapsed / 10) as number).toFixed(0);
    row["CPU % of a core: servers / PG / generators"] =
      `${core(serverCpu)} / ${core(pg + pgCluster)} / ${core(generatorCpu)}`;
    row["RSS/agent"] = `${((rss - idleRss) / Math.max(live, 1)).toFixed(0)} KB`;
    row["load (1 min) / busy"] =
      `${load.toFixed(1)} / ${((100 * (machineAfter.busy - machineBefore.busy)) / Math.max(1, machineAfter.all - machineBefore.all)).toFixed(0)} %`;
    const pauseCalls = all("pauseCalls");
    const detail = [
      `${agents} agents: ${live} set up; ${reads.length} reads, ${writes.length} writes, ${done.reduce((n, r) => n + r.polls, 0)} long-poll answers, ${pauseCalls.length} pause/resume calls (p50 ${ms(pauseCalls.length ? percentile(pauseCalls, 50) : undefined)} ms) in ${elapsed.toFixed(0)} s`,
      `servers' CPU ${serverCpu.toFixed(0)} ms, ${((100 * serverSystem) / Math.max(serverCpu, 1)).toFixed(0)} % of it in the kernel; PostgreSQL CPU ${pg.toFixed(0)} ms in the database's backends + ${pgCluster.toFixed(0)} ms in the cluster's own processes, ${xacts} transactions (${(xacts / Math.max(answered, 1)).toFixed(2)} per request); servers' RSS ${(idleRss / 1024).toFixed(0)} → ${(rss / 1024).toFixed(0)} MB`,
      Object.keys(misses).length
        ? `misses: ${Object.entries(misses)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")}`
        : "misses: none",
      ...(Object.keys(notesCount).length
        ? [
            `notes: ${Object.entries(notesCount)
              .map(([k, v]) => `${k} ${v}`)
              .join(", ")}`,
          ]
        : []),
      ...notes,
    ].join("; ");
    return { row, detail };
  } catch (err) {
    notes.push(`fell over: ${(err as Error).message.split("\n")[0]}`);
    return { row, detail: `${agents} agents: ${notes.join("; ")}` };
  } finally {
    cleanups.delete(cleanup);
    await cleanup();
    if (profDir) {
      // Every profile the servers wrote at exit (their main threads' and tsx's loader threads'), cut to the window.
      const sum = {
        agents,
        requests,
        groups: new Map<string, number>(),
        items: new Map<string, { group: string; ms: number }>(),
        totalMs: 0,
      };
      for (const f of readdirSync(profDir).filter((x) => x.endsWith(".cpuprofile"))) {
        const one = summarize(JSON.parse(readFileSync(path.join(profDir, f), "utf8")), window);
        sum.totalMs += one.totalMs;
        for (const [g, v] of one.groups) sum.groups.set(g, (sum.groups.get(g) ?? 0) + v);
        for (const [k, v] of one.items) {
          const it = sum.items.get(k) ?? { group: v.group, ms: 0 };
          it.ms += v.ms;
          sum.items.set(k, it);
        }
      }
      profiles.push(sum);
      rmSync(profDir, { recursive: true, force: true });
    }
  }
}

const rows: Row[] = [];
const details: string[] = [];
const loadAtStart = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(" / ");
for (const agents of SIZES) {
  process.stderr.write(`bench:company: ${agents} agents (load ${os.loadavg()[0]!.toFixed(1)})\n`);
  const { row, detail } = await step(agents);
  if (PROFILE) row.agents += " (--cpu-prof)";
  rows.push(row);
  details.push(`- ${detail}`);
  process.stderr.write(`${JSON.stringify(row)}\n${detail}\n`);
}
table(
  `A company's server: ${INSTANCES} \`cohent serve\` on one PostgreSQL, repositories × ${PER_REPO} agents, each with a long-poll open (x-cohent-wait: ${PACE.waitSeconds}), a kill-switch read every ~${PACE.readMs / 1000} s and a checkpoint every ~${PACE.writeMs / 1000} s, from ${GENERATORS} generator processes, ${SECONDS} s window per size`,
  rows,
);
for (const p of profiles) {
  const pct = (x: number) => ((100 * x) / p.totalMs).toFixed(1);
  const perReq = (x: number) => (p.requests ? (x / p.requests).toFixed(3) : "-");
  const title = `${p.agents} agents under --cpu-prof: the servers' self time in the window, ${Math.round(p.totalMs)} ms non-idle over ${p.requests} requests`;
  table(
    `Profile by group, ${title}`,
    [...p.groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([group, ms]) => ({ group, "self %": pct(ms), "ms/req": perReq(ms) })),
  );
  table(
    `Top self time by package or file, ${title}`,
    [...p.items.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 20))
      .map(([item, { group, ms }]) => ({
        "package or file": item,
        group,
        "self %": pct(ms),
        "ms/req": perReq(ms),
      })),
  );
}
if (!PROFILE && !process.argv.includes("--no-record"))
  replaceSection(
    "npm run bench:company",
    [
      "## `npm run bench:company`",
      `${runLine()} Load at its start ${loadAtStart}.`,
      printed.at(-1)!,
      details.join("\n"),
    ].join("\n\n"),
  );
process.exit(0);
