import { cohent, runJson, startCohent, type Db, type Proc } from "./procs.js";
import type { Row } from "./requests.js";

/**
 * The flood (test/integration/hostile.test.ts checks its answers; the figure is here): one token
 * floods kill-switch reads from its own process (flood.mjs, 16 connections) past the per-token
 * limit (COHENT_RATE_LIMIT 20/40, as in that test), while another token reads its kill switch one at
 * a time, every 25 ms. Rows: that read's p50 with no flood and during the flood, each as a ratio to
 * the bare Koa endpoint's p50 sampled the same way in the same run, and during / no flood.
 */

const SAMPLES = 40;
const FLOOD_MS = 7_000;

async function sampleP50(url: string, headers: Record<string, string> = {}): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    out.push(performance.now() - t);
    await new Promise((done) => setTimeout(done, 25));
  }
  return out.sort((a, b) => a - b)[Math.floor(out.length / 2)]!;
}

export async function benchFlood(db: Db, bare: Proc): Promise<Row[]> {
  const server = await startCohent({ ...db, env: { ...db.env, COHENT_RATE_LIMIT: "20/40" } });
  try {
    await cohent(db, "repo", "add", "bench/flood", "--goal", "Benchmark a flood");
    const issue = (person: string) =>
      cohent(db, "token", "issue", "--repo", "bench/flood", "--person", person, "--client", "bench");
    const flooder = await issue("flooder");
    const quiet = await issue("quiet");
    const read = `${server.url}/api/agent/session`;
    const headers = { authorization: `Bearer ${quiet}`, "x-cohent-session": "quiet" };
    await sampleP50(bare.url); // warm both
    await sampleP50(read, headers);
    const bareP50 = await sampleP50(bare.url);
    const before = await sampleP50(read, headers);
    const flood = runJson<{ counts: Record<string, number> }>("flood.mjs", {
      url: server.url,
      token: flooder,
      ms: FLOOD_MS,
    });
    await new Promise((done) => setTimeout(done, 1_000));
    const during = await sampleP50(read, headers);
    const { counts } = await flood;
    const row = (what: string, p50: number, vsQuiet: string, flood: string): Row => ({
      database: db.kind,
      "another token's kill-switch read": what,
      "p50 ms": p50.toFixed(2),
      "ratio to bare Koa": (p50 / bareP50).toFixed(2),
      "ratio to no flood": vsQuiet,
      "flood's answers": flood,
    });
    return [
      row("bare Koa JSON (baseline)", bareP50, "-", "-"),
      row("no flood", before, "1.00", "-"),
      row(
        "during the flood",
        during,
        (during / before).toFixed(2),
        Object.entries(counts)
          .map(([k, v]) => `${k}: ${v}`)
          .join(", "),
      ),
    ];
  } finally {
    await server.stop();
  }
}
