import {
  agent,
  cannon,
  cohent,
  CONNECTIONS,
  SECONDS,
  startCohent,
  type CannonSpec,
  type Db,
  type Proc,
} from "./procs.js";

/**
 * Issue 10's table: each hot-path request alone, closed loop with
 * CONNECTIONS in flight from a separate autocannon process, against the
 * bare Koa endpoint measured in the same run by the same generator.
 */

export interface RequestCase {
  name: string;
  spec: CannonSpec;
}

/** Registers a repository and a token through the admin CLI, then prepares one session per request. */
export async function prepareCases(server: Proc, db: Db, repo: string): Promise<RequestCase[]> {
  await cohent(db, "repo", "add", repo, "--goal", "Benchmark the hot path");
  const token = await cohent(db, "token", "issue", "--repo", repo, "--person", "bench", "--client", "bench");
  const base = server.url;
  const url = `${base}/api/agent`;
  const started = async (session: string, output: string) => {
    const a = agent(base, token, session);
    const { intentId } = await a.post({ type: "publish", prompt: `bench ${session}`, paths: [] });
    await a.post({
      type: "intent",
      intentId,
      intent: { objective: `Bench ${session}`, components: [`component-${output}`], outputs: [output] },
    });
    return { a, intentId: intentId as string };
  };
  // Ten peers, each holding a claim, so that the resolver, the poll and the scope's arbitration have
  // something to compare against.
  for (let i = 0; i < 10; i++) {
    const peer = await started(`peer-${i}`, `peer-out-${i}`);
    await peer.a.post({ type: "scope", intentId: peer.intentId, paths: [`peers/p${i}`, `docs/p${i}.md`] });
  }

  const read = await started("bench-read", "read-out");
  const empty = await started("bench-poll", "poll-out");
  const own = await started("bench-own", "own-out");
  const cp = await started("bench-cp", "cp-out");
  const pub = agent(base, token, "bench-pub");
  const int = await started("bench-int", "int-out");
  const scope = await started("bench-scope", "scope-out");
  // It shares two peers' components: the resolver finds candidates (and decides it works beside them).
  const intentBody = {
    objective: "Bench bench-int",
    components: ["component-int-out", "component-peer-out-0", "component-peer-out-1"],
    outputs: ["int-out"],
  };
  // The intent row's body meets peers: check the resolver names them, as the row's name promises.
  const met = await int.a.post({ type: "intent", intentId: int.intentId, intent: intentBody });
  if (!(met.peerIds as string[]).length) throw new Error("the intent row's intent meets no peer");
  // Cursors once every setup write is in: the empty poll has nothing new;
  // the caller's own checkpoint lands after ownCursor, so every poll from there sees it.
  const emptyCursor = (await empty.a.poll(empty.intentId)).cursor as string;
  const ownCursor = (await own.a.poll(own.intentId)).cursor as string;
  await own.a.post({ type: "checkpoint", intentId: own.intentId, status: "working", summary: "own step" });
  // Check that each poll measures what its name says.
  if ((await empty.a.poll(empty.intentId, emptyCursor)).packet !== null)
    throw new Error("the empty poll is not empty");
  if ((await own.a.poll(own.intentId, ownCursor)).cursor === ownCursor)
    throw new Error("the poll after the own checkpoint sees nothing after its cursor");

  const post = (headers: Record<string, string>, body: unknown): Partial<CannonSpec> => ({
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });

  return [
    {
      name: "kill-switch read GET /api/agent/session",
      spec: { url: `${url}/session`, headers: read.a.headers },
    },
    {
      name: "empty poll GET /api/agent",
      spec: {
        url,
        headers: { ...empty.a.headers, "x-cohent-intent": empty.intentId, "x-cohent-cursor": emptyCursor },
      },
    },
    {
      name: "poll after own checkpoint",
      spec: {
        url,
        headers: { ...own.a.headers, "x-cohent-intent": own.intentId, "x-cohent-cursor": ownCursor },
      },
    },
    {
      name: "checkpoint POST",
      spec: {
        url,
        ...post(cp.a.headers, {
          type: "checkpoint",
          intentId: cp.intentId,
          status: "working",
          summary: "bench step",
        }),
      },
    },
    {
      name: "publish POST",
      spec: { url, ...post(pub.headers, { type: "publish", prompt: "bench publish", paths: [] }) },
    },
    {
      name: "intent POST",
      spec: { url, ...post(int.a.headers, { type: "intent", intentId: int.intentId, intent: intentBody }) },
    },
    {
      name: "scope POST",
      spec: {
        url,
        ...post(scope.a.headers, {
          type: "scope",
          intentId: scope.intentId,
          paths: ["bench/scope-out", "docs/scope-out.md"],
        }),
      },
    },
  ];
}

export type Row = Record<string, string | number>;

// autocannon records latency in whole milliseconds.
const ms = (x: number) => (!Number.isFinite(x) ? "-" : x === 0 ? "<1" : x.toFixed(x < 10 ? 2 : 1));
const cpu = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : "-");

/** One database: a fresh server process, the baseline, then every request. */
export async function benchRequests(db: Db, bare: Proc, names?: string[]): Promise<Row[]> {
  const server = await startCohent(db);
  const rows: Row[] = [];
  try {
    const cases = await prepareCases(server, db, "bench/requests");
    const run = (spec: CannonSpec, pids: number[], duration = SECONDS) =>
      cannon({ connections: CONNECTIONS, duration, ...spec }, pids);
    // Warm both processes (JIT, connection pools) before measuring.
    await run({ url: bare.url }, [bare.pid], 1);
    await run(cases[1]!.spec, [server.pid], 1);
    const baseline = await run({ url: bare.url }, [bare.pid]);
    rows.push(row(db.kind, "bare Koa JSON (baseline)", baseline, baseline.rps));
    // The kill-switch read's floor, in the bare endpoint's process (bare-koa.mjs): what any authenticated read pays.
    const floor = "kill-switch floor: bare Koa + token hash, session, envelope, log line";
    if (!names || names.some((n) => floor.includes(n))) {
      const read = cases.find((c) => c.name.startsWith("kill-switch read"))!;
      const spec = { url: `${bare.url}/floor/session`, headers: read.spec.headers };
      rows.push(row(db.kind, floor, await run(spec, [bare.pid]), baseline.rps));
    }
    for (const c of cases) {
      if (names && !names.some((n) => c.name.includes(n))) continue;
      rows.push(row(db.kind, c.name, await run(c.spec, [server.pid]), baseline.rps));
    }
  } finally {
    await server.stop();
  }
  return rows;
}

function row(
  database: string,
  request: string,
  r: Awaited<ReturnType<typeof cannon>>,
  baseline: number,
): Row {
  return {
    database,
    request,
    "req/s": Math.round(r.rps),
    "p50 ms": ms(r.p50),
    "p99 ms": ms(r.p99),
    "ratio to bare Koa": (r.rps / baseline).toFixed(3),
    "server CPU ms/req": cpu(r.cpuMsPerReq),
    "non-2xx": r.non2xx + r.errors,
  };
}
