import os from "node:os";
import { REQUEST_ID_HEADER } from "@cohent/protocol";
import { startBackend } from "../test/helpers/backend.js";
import { median, percentile, table } from "./lib.js";

/**
 * What a request id costs a write (issue 52): checkpoints of one session, sent one after another,
 * with and without `idempotency-key`, interleaved so that machine noise hits both alike; and a
 * retry of an answered id (answered from the record, nothing run). SQLite, and PostgreSQL when
 * COHENT_TEST_DATABASE_URL is set. Ratios to the plain checkpoint of the same run. A script run by
 * hand (`npx tsx bench/request-ids.ts`), not part of `npm run bench` or the tests.
 */

const ROUNDS = Number(process.env.COHENT_BENCH_ROUNDS ?? 300);
process.env.COHENT_RATE_LIMIT = "off";

async function benchKind(kind: "sqlite" | "postgres") {
  const backend = await startBackend({ kind });
  try {
    await backend.addRepo("bench/ids");
    const token = await backend.issueToken("bench/ids", "bench");
    const headers = {
      authorization: `Bearer ${token}`,
      "x-cohent-session": "bench-ids",
      "content-type": "application/json",
    };
    const post = async (body: unknown, id?: string) => {
      const start = performance.now();
      const res = await fetch(`${backend.url}/api/agent`, {
        method: "POST",
        headers: id ? { ...headers, [REQUEST_ID_HEADER]: id } : headers,
        body: JSON.stringify(body),
      });
      await res.json();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      return performance.now() - start;
    };
    const published = await fetch(`${backend.url}/api/agent`, {
      method: "POST",
      headers,
      body: JSON.stringify({ type: "publish", prompt: "bench request ids" }),
    });
    const intentId = ((await published.json()) as { data: { intentId: string } }).data.intentId;
    const body = (i: number) => ({ type: "checkpoint", intentId, status: "working", summary: `step ${i}` });
    const times = { plain: [] as number[], id: [] as number[], retry: [] as number[] };
    for (let i = 0; i < 20; i++) await post(body(i), `bench-warm-${i}-padding`);
    for (let i = 0; i < ROUNDS; i++) {
      const id = `bench-${kind}-${i}-padding`;
      times.plain.push(await post(body(i)));
      times.id.push(await post(body(i), id));
      times.retry.push(await post(body(i), id));
    }
    const base = median(times.plain);
    const row = (what: string, xs: number[]) => ({
      database: kind,
      case: what,
      "p50 ms": median(xs).toFixed(2),
      "p90 ms": percentile(xs, 90).toFixed(2),
      "× plain p50": (median(xs) / base).toFixed(2),
    });
    return [
      row("checkpoint, no request id", times.plain),
      row("checkpoint with a request id", times.id),
      row("the same id again (answered from the record)", times.retry),
    ];
  } finally {
    await backend.stop();
  }
}

const rows = await benchKind("sqlite");
if (process.env.COHENT_TEST_DATABASE_URL) rows.push(...(await benchKind("postgres")));
table(
  `Request ids: a checkpoint's latency, ${ROUNDS} rounds (Node ${process.version}, ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ")})`,
  rows,
);
