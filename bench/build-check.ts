import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildAdapter } from "../adapter/build.mjs";
import { adapterBuild, buildStamps, type InProcessHook } from "../adapter/src/loader/build-check.js";

/**
 * The per-call cost of the rule every long-lived guard follows (adapter/src/loader/build-check.ts):
 * the build's files stat'ed before each decision. Measured on the built files in a scratch folder:
 * the stat alone (the MCP server's two files; the warm guard and the plugin's loader stat one more
 * each), and a call through the checked hook against the same hook called directly, the decision
 * itself a no-op, so that the difference is the check's. Per call, in microseconds; no goal: the
 * figure is printed beside a hook call's milliseconds (bench/adapter-coldstart.ts, watch-cost.ts).
 */
const N = 20_000;

function perCall(f: () => void): number {
  for (let i = 0; i < 1000; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) f();
  return Number(process.hrtime.bigint() - t0) / N / 1000;
}

async function perCallAsync(f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 1000; i++) await f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await f();
  return Number(process.hrtime.bigint() - t0) / N / 1000;
}

export async function benchBuildCheck(): Promise<Record<string, string | number>[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-bench-build-"));
  try {
    const outfile = await buildAdapter({ quiet: true, outfile: path.join(dir, "cohent.mjs") });
    const at = path.dirname(outfile);
    const stamps = buildStamps(at);
    if (!("stamps" in stamps)) throw new Error(stamps.reason);
    const answer = { exitCode: 0 };
    const own: InProcessHook = async () => answer;
    const checked = adapterBuild(at, { stamps: stamps.stamps, hook: own });
    const payload = "{}";
    const o = { host: "claude", dir: at };
    const stat = perCall(() => void buildStamps(at));
    const direct = await perCallAsync(() => own(payload, o));
    const through = await perCallAsync(() => checked(payload, o));
    return [
      { what: "stat of the build (cohent.cjs, cohent-core.js)", "µs per call": stat.toFixed(1) },
      { what: "a no-op hook called directly", "µs per call": direct.toFixed(1) },
      { what: "the same hook through the check", "µs per call": through.toFixed(1) },
      { what: "the check's own cost", "µs per call": (through - direct).toFixed(1) },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const rows = await benchBuildCheck();
  for (const r of rows) console.log(`${String(r.what).padEnd(50)} ${r["µs per call"]} µs`);
}
