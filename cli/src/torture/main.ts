import path from "node:path";
import { parseArgs } from "node:util";

/**
 * `cohent torture`'s entry (cli/bin/cohent.mjs hands it argv after `torture`). Two hidden modes are the
 * run's own processes: `--instance <spec>` (a server) and `--worker <spec>` (agents).
 */
const USAGE = `usage: cohent torture [--url <deployment>]... [--seconds N] [--agents N] [--history file]
                      [--lease-seconds N] [--skew-ms N] [--checkpoint-claims]
Runs agents against a deployment while injecting faults, records every operation and checks the
history: overlapping claims, lost or doubled writes, late pauses, untold lost claims, errors that are
not retryable during an outage. Without --url it starts its own: two instances on a fresh PostgreSQL
database (COHENT_TORTURE_PG_URL, default postgresql://postgres@127.0.0.1:5432/postgres) when it
answers, else one on SQLite. With --url, DATABASE_URL names the deployment's database (set-up and the
final read). --checkpoint-claims: working checkpoints carry the claimed path (a claim too).
Exit 0 when no anomaly was found.`;

export async function main(argv: string[], bin: string): Promise<number> {
  if (argv[0] === "--instance") {
    const { serveInstance } = await import("./instance.js");
    await serveInstance(JSON.parse(argv[1]!));
    return -1; // keeps serving
  }
  if (argv[0] === "--worker") {
    const { runWorker } = await import("./worker.js");
    await runWorker(JSON.parse(argv[1]!));
    return 0;
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: "string", multiple: true },
        seconds: { type: "string" },
        agents: { type: "string" },
        history: { type: "string" },
        "lease-seconds": { type: "string" },
        "skew-ms": { type: "string" },
        "checkpoint-claims": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    process.stderr.write(`cohent torture: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const num = (raw: string | undefined, fallback: number, name: string) => {
    if (raw === undefined) return fallback;
    const v = Number(raw);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} takes a number, not ${raw}`);
    return v;
  };
  const urls = values.url ?? [];
  const seconds = num(values.seconds, 60, "seconds");
  const historyFile = path.resolve(
    values.history ?? `cohent-torture-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`,
  );
  const { runTorture, report } = await import("./run.js");
  const postgresUrl = urls.length ? null : await reachablePostgres();
  const out = (line: string) => process.stderr.write(line + "\n");
  out(
    urls.length
      ? `cohent torture: ${seconds} s against ${urls.join(", ")}`
      : `cohent torture: ${seconds} s against its own ${postgresUrl ? "two instances on PostgreSQL" : "instance on SQLite"}`,
  );
  const { result, history } = await runTorture({
    urls,
    seconds,
    agents: num(values.agents, 8, "agents"),
    historyFile,
    leaseSeconds: num(values["lease-seconds"], urls.length ? 600 : 6, "lease-seconds"),
    skewMs: num(values["skew-ms"], 1_000, "skew-ms"),
    checkpointClaims: !!values["checkpoint-claims"],
    bin,
    postgresUrl,
    out,
  });
  process.stdout.write(report(result, history.faults, historyFile) + "\n");
  return result.anomalies.length ? 1 : 0;
}

/** The PostgreSQL server to create the run's database on, if one answers within 3 s. */
async function reachablePostgres(): Promise<string | null> {
  const url =
    process.env.COHENT_TORTURE_PG_URL ??
    process.env.COHENT_TEST_DATABASE_URL ??
    "postgresql://postgres@127.0.0.1:5432/postgres";
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query("SELECT 1");
    return url;
  } catch {
    return null;
  } finally {
    await c.end().catch(() => {});
  }
}
