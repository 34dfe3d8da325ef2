import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { init } from "../adapter/src/installer/init.js";
import { makeCheckout } from "../test/adapter/helpers.js";
import { benchCheckout, median, table } from "./lib.js";

/**
 * The SessionStart hook's whole process (`node .cohent/cohent.cjs hook`, as
 * init wires it for Claude Code) in a checkout made by init, against a local
 * server, beside `node -e 0` in the same run (interleaved, so that machine
 * noise hits every case alike). The wiring check runs on every session
 * start: intact, it reads the small wiring files and stats the adapter's
 * (hashed only when their stat moved) and sends nothing; modified, it also
 * reports to the server. Run: npx tsx bench/session-start.ts
 * (COHENT_BENCH_RUNS, default 30; COHENT_BENCH_BEFORE=<an earlier build's
 * cohent.mjs> measures that build beside this one, in the same rounds).
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 30);

function once(args: string[], cwd: string, env: Record<string, string>, stdin = ""): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`${args.join(" ")} exited ${code}`)),
    );
    child.stdin.end(stdin);
  });
}

/**
 * A checkout made by init from `bundle`, wired to the bench's server, and its
 * SessionStart case: intact (nothing sent), or modified (`disableAllHooks`:
 * reported on every start). One checkout each, so that no intact start is the
 * first after a modified one (which sends the report that clears it).
 */
async function startCase(label: string, bundle: string, service: string, token: string, modified: boolean) {
  const co = await makeCheckout(service, "bench/session-start");
  init({ cwd: co.root, server: service, repo: "bench/session-start", bundle });
  if (modified) {
    const settings = path.join(co.root, ".claude", "settings.json");
    writeFileSync(
      settings,
      JSON.stringify({ ...JSON.parse(readFileSync(settings, "utf8")), disableAllHooks: true }),
    );
  }
  const script = path.join(co.root, ".cohent", "cohent.cjs");
  const env = { PATH: process.env.PATH ?? "", HOME: co.home, COHENT_AGENT_TOKEN: token, CLAUDECODE: "1" };
  let n = 0;
  const payload = () =>
    JSON.stringify({
      session_id: `bench-${n++}`,
      transcript_path: "/tmp/c.jsonl",
      cwd: co.root,
      hook_event_name: "SessionStart",
      source: "startup",
    });
  return {
    name: `${label}: SessionStart, wiring ${modified ? "modified (reported)" : "intact"}`,
    run: () => once([script, "hook"], co.root, env, payload()),
    cleanup: () => rmSync(path.dirname(co.root), { recursive: true, force: true }),
  };
}

export async function benchSessionStart(): Promise<Record<string, string | number>[]> {
  const bench = await benchCheckout("bench/session-start", "Claude Code");
  // COHENT_BENCH_BEFORE: another build's cohent.mjs (an earlier commit's), measured beside this one.
  const bundles: [string, string][] = [["this build", bench.bundle]];
  if (process.env.COHENT_BENCH_BEFORE) bundles.unshift(["before", process.env.COHENT_BENCH_BEFORE]);
  const made = await Promise.all(
    bundles.flatMap(([label, bundle]) =>
      [false, true].map((modified) => startCase(label, bundle, bench.backend.url, bench.token, modified)),
    ),
  );
  try {
    const cases: [string, () => Promise<number>][] = [
      ["node -e 0", () => once(["-e", "0"], bench.root, { PATH: process.env.PATH ?? "" })],
      ...made.map((m): [string, () => Promise<number>] => [m.name, m.run]),
    ];
    const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (const [, run] of cases) await run(); // warm the code caches and the server
    for (let i = 0; i < RUNS; i++) for (const [name, run] of cases) times.get(name)!.push(await run());
    const base = median(times.get("node -e 0")!);
    return cases.map(([name]) => {
      const m = median(times.get(name)!);
      return { case: name, "p50 ms": m.toFixed(1), "× node -e 0": (m / base).toFixed(2) };
    });
  } finally {
    for (const m of made) m.cleanup();
    await bench.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  table(`SessionStart hook process (${RUNS} runs, median)`, await benchSessionStart());
}
