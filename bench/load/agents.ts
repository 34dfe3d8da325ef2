import { cohent, runJson, startCohent, type Db, type Proc } from "./procs.js";
import type { Row } from "./requests.js";

/**
 * Issue 11's scenario: BENCH_AGENTS simulated agents (200), each with its own
 * session, from one separate generator process (agents.mjs), against one or
 * more `cohent serve` processes, and against the bare Koa process with the
 * same generator in the same run.
 */

const AGENTS = Number(process.env.BENCH_AGENTS ?? 200);
const SECONDS = Number(process.env.BENCH_AGENTS_SECONDS ?? 20);
const BASELINE_SECONDS = Number(process.env.BENCH_AGENTS_BASELINE_SECONDS ?? 10);
const SETUP_SECONDS = Number(process.env.BENCH_AGENTS_SETUP_SECONDS ?? 15);
const PACE = {
  sessionMs: Number(process.env.BENCH_AGENTS_SESSION_MS ?? 2000),
  pollMs: Number(process.env.BENCH_AGENTS_POLL_MS ?? 5000),
  /** Long-poll wait (x-cohent-wait); 0 polls every pollMs instead. A long-poll's latency is how long it was held open. */
  waitSeconds: Number(process.env.BENCH_AGENTS_WAIT_SECONDS ?? 20),
  checkpointMs: Number(process.env.BENCH_AGENTS_CHECKPOINT_MS ?? 5000),
  taskMs: Number(process.env.BENCH_AGENTS_TASK_MS ?? 30000),
};
const OPS = ["session", "poll", "checkpoint", "publish", "intent", "scope"] as const;

interface OpStats {
  count: number;
  perSecond: number;
  p50: number | null;
  p99: number | null;
  failures: Record<string, number>;
}
type Ops = Record<(typeof OPS)[number], OpStats>;
interface AgentsResult {
  setupSeconds: number;
  setup: Ops;
  elapsed: number;
  cpuMs: number;
  /** The window's machine: cores, their busy share (0-1), the database's and the generator's CPU ms. */
  machine: { cores: number; busy: number; databaseCpuMs: number; generatorCpuMs: number };
  ops: Ops;
}

function generate(
  targets: string[],
  pids: number[],
  tokens: string[],
  seconds: number,
  prefix: string,
  mix = false,
): Promise<AgentsResult> {
  return runJson<AgentsResult>("agents.mjs", {
    targets,
    pids,
    token: tokens[0],
    tokens,
    mix,
    agents: AGENTS,
    seconds,
    setupSeconds: SETUP_SECONDS,
    prefix,
    ...(process.env.BENCH_AGENTS_TRACE ? { trace: `${process.env.BENCH_AGENTS_TRACE}-${prefix}.jsonl` } : {}),
    ...PACE,
  });
}

export function agentsBaseline(bare: Proc): Promise<AgentsResult> {
  return generate([bare.url], [bare.pid], ["bare"], BASELINE_SECONDS, "bare");
}

const ms = (x: number | null) => (x === null || !Number.isFinite(x) ? "-" : x.toFixed(x < 10 ? 2 : 1));

/** The scenarios of section 2 (BENCH_AGENTS_SCENARIOS): each agent on its own work, and the contention mix. */
export const SCENARIOS = (process.env.BENCH_AGENTS_SCENARIOS ?? "own,mix").split(",") as ("own" | "mix")[];
/** The contention mix's people: agent i is person i % PEOPLE's. */
const PEOPLE = 8;

/**
 * One configuration: `instances` server processes on one database, the load split across them. `mix`:
 * agents of PEOPLE people sharing components, outputs and paths (agents.mjs), in a repository of its own.
 */
export async function benchAgents(
  db: Db,
  instances: number,
  baseline: AgentsResult,
  mix = false,
): Promise<Row[]> {
  const repo = mix ? "bench/agents-mix" : "bench/agents";
  await cohent(db, "repo", "add", repo, "--goal", "Two hundred agents at once");
  const tokens: string[] = [];
  for (let p = 0; p < (mix ? PEOPLE : 1); p++)
    tokens.push(
      await cohent(db, "token", "issue", "--repo", repo, "--person", `bench-${p}`, "--client", "bench"),
    );
  const servers: Proc[] = [];
  try {
    // BENCH_AGENTS_CPU_PROF=<dir>: each server writes a V8 CPU profile there (node --cpu-prof).
    const prof = process.env.BENCH_AGENTS_CPU_PROF;
    const flags = prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : [];
    if (process.env.BENCH_AGENTS_NODE_FLAGS) flags.push(...process.env.BENCH_AGENTS_NODE_FLAGS.split(" "));
    for (let i = 0; i < instances; i++) servers.push(await startCohent(db, flags));
    const r = await generate(
      servers.map((s) => s.url),
      servers.map((s) => s.pid),
      tokens,
      SECONDS,
      `${db.kind}-${instances}${mix ? "-mix" : ""}`,
      mix,
    );
    const config = `${db.kind} × ${instances}${mix ? ", mix" : ""}`;
    const line = (operation: string, o: OpStats, b: OpStats): Row => ({
      config,
      operation,
      "ops/s": o.perSecond.toFixed(1),
      "p50 ms": ms(o.p50),
      "p99 ms": ms(o.p99),
      "bare Koa ops/s": b.perSecond.toFixed(1),
      "bare Koa p50 ms": ms(b.p50),
      "bare Koa p99 ms": ms(b.p99),
      "failures / notes":
        Object.entries(o.failures)
          .map(([code, n]) => `${code} ${n}`)
          .join(", ") || "0",
    });
    const rows: Row[] = [];
    for (const op of ["publish", "intent", "scope"] as const) {
      const row = line(`first ${op} (setup)`, r.setup[op], baseline.setup[op]);
      rows.push({
        ...row,
        "ops/s": `${r.setup[op].count} done`,
        "bare Koa ops/s": `${baseline.setup[op].count} done`,
      });
    }
    for (const op of OPS) rows.push(line(op, r.ops[op], baseline.ops[op]));
    const total = (x: AgentsResult) => OPS.reduce((n, op) => n + x.ops[op].count, 0);
    rows.push({
      config,
      operation: "all (window)",
      "ops/s": (total(r) / r.elapsed).toFixed(1),
      "p50 ms": "",
      "p99 ms": "",
      "bare Koa ops/s": (total(baseline) / baseline.elapsed).toFixed(1),
      "bare Koa p50 ms": "",
      "bare Koa p99 ms": "",
      "failures / notes": `setup ${r.setupSeconds.toFixed(1)} s (bare ${baseline.setupSeconds.toFixed(1)} s); server CPU ${(r.cpuMs / r.elapsed / 10).toFixed(0)} % of a core, ${(r.cpuMs / Math.max(total(r), 1)).toFixed(2)} ms/op (bare ${(baseline.cpuMs / Math.max(total(baseline), 1)).toFixed(2)}); machine ${(r.machine.busy * 100).toFixed(0)} % busy of ${r.machine.cores} cores: database ${(r.machine.databaseCpuMs / r.elapsed / 10).toFixed(0)} %, generator ${(r.machine.generatorCpuMs / r.elapsed / 10).toFixed(0)} % of a core`,
    });
    return rows;
  } finally {
    for (const s of servers) await s.stop();
  }
}

export const agentsTitle =
  `${AGENTS} simulated agents from one separate process: each publishes, declares and claims its first task (setup, bounded by ${SETUP_SECONDS} s), ` +
  `then for a ${SECONDS} s window (bare Koa: ${BASELINE_SECONDS} s) reads the kill switch every ~${PACE.sessionMs / 1000} s, ${PACE.waitSeconds ? `keeps one long-poll open (x-cohent-wait: ${PACE.waitSeconds}; its latency is the time held open, answered at a change), ` : `polls every ~${PACE.pollMs / 1000} s, `}` +
  `checkpoints every ~${PACE.checkpointMs / 1000} s and starts a new task every ~${PACE.taskMs / 1000} s. ` +
  `"mix": the agents of ${PEOPLE} people share components (10 agents each), outputs and areas (4 each); a refused scope queues; SCOPE_CONFLICT is an answer, counted in the notes`;
