import { cohent, cpuMs, runJson, startCohent, type Db, type Proc } from "./procs.js";
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
const OPS = ["session", "poll", "checkpoint", "publish", "intent", "scope"] as const;

interface OpStats {
  count: number;
  perSecond: number;
  p50: number | null;
  p99: number | null;
  failures: Record<string, number>;
}
interface AgentsResult {
  elapsed: number;
  ops: Record<(typeof OPS)[number], OpStats>;
}

function generate(targets: string[], token: string, seconds: number, prefix: string): Promise<AgentsResult> {
  return runJson<AgentsResult>("agents.mjs", {
    targets,
    token,
    agents: AGENTS,
    seconds,
    prefix,
    sessionMs: Number(process.env.BENCH_AGENTS_SESSION_MS ?? 1000),
    pollMs: Number(process.env.BENCH_AGENTS_POLL_MS ?? 2000),
    checkpointMs: Number(process.env.BENCH_AGENTS_CHECKPOINT_MS ?? 3000),
    taskMs: Number(process.env.BENCH_AGENTS_TASK_MS ?? 10000),
  });
}

export function agentsBaseline(bare: Proc): Promise<AgentsResult> {
  return generate([bare.url], "bare", BASELINE_SECONDS, "bare");
}

const ms = (x: number | null) => (x === null || !Number.isFinite(x) ? "-" : x.toFixed(x < 10 ? 2 : 1));

/** One configuration: `instances` server processes on one database, the load split across them. */
export async function benchAgents(db: Db, instances: number, baseline: AgentsResult): Promise<Row[]> {
  const repo = "bench/agents";
  await cohent(db, "repo", "add", repo, "--goal", "Two hundred agents at once");
  const token = await cohent(db, "token", "issue", "--repo", repo, "--person", "bench", "--client", "bench");
  const servers: Proc[] = [];
  try {
    for (let i = 0; i < instances; i++) servers.push(await startCohent(db));
    const before = servers.map((s) => cpuMs(s.pid));
    const r = await generate(
      servers.map((s) => s.url),
      token,
      SECONDS,
      `${db.kind}-${instances}`,
    );
    const cpu = servers.reduce((sum, s, i) => sum + cpuMs(s.pid) - before[i]!, 0);
    const total = OPS.reduce((n, op) => n + r.ops[op].count, 0);
    const config = `${db.kind} × ${instances}`;
    const rows: Row[] = OPS.map((op) => {
      const o = r.ops[op];
      const b = baseline.ops[op];
      const failed = Object.entries(o.failures).map(([code, n]) => `${code} ${n}`).join(", ");
      return {
        config,
        operation: op,
        "ops/s": o.perSecond.toFixed(1),
        "p50 ms": ms(o.p50),
        "p99 ms": ms(o.p99),
        "bare Koa ops/s": b.perSecond.toFixed(1),
        "bare Koa p50 ms": ms(b.p50),
        "bare Koa p99 ms": ms(b.p99),
        failures: failed || "0",
      };
    });
    rows.push({
      config,
      operation: "all",
      "ops/s": (total / r.elapsed).toFixed(1),
      "p50 ms": "",
      "p99 ms": "",
      "bare Koa ops/s": (OPS.reduce((n, op) => n + baseline.ops[op].count, 0) / baseline.elapsed).toFixed(1),
      "bare Koa p50 ms": "",
      "bare Koa p99 ms": "",
      failures: `server CPU ${(cpu / r.elapsed / 10).toFixed(0)} % of a core, ${(cpu / Math.max(total, 1)).toFixed(2)} ms/op`,
    });
    return rows;
  } finally {
    for (const s of servers) await s.stop();
  }
}

export const agentsTitle = `${AGENTS} simulated agents from one separate process, ${SECONDS} s per configuration (bare Koa: ${BASELINE_SECONDS} s); each agent reads the kill switch every ~${Number(process.env.BENCH_AGENTS_SESSION_MS ?? 1000) / 1000} s, polls every ~${Number(process.env.BENCH_AGENTS_POLL_MS ?? 2000) / 1000} s, checkpoints every ~${Number(process.env.BENCH_AGENTS_CHECKPOINT_MS ?? 3000) / 1000} s, and publishes, declares and claims a new task every ~${Number(process.env.BENCH_AGENTS_TASK_MS ?? 10000) / 1000} s`;
