import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildPackage } from "../scripts/pack.mjs";
import { median } from "./lib.js";

/**
 * Start-up of the packaged `cohent` (compiled, as installed: dist/package, the
 * tree `npm run pack` packs), against `node -e 0` in the same run. Goal from
 * issue 14: `--help` and the commands that touch no database ≤ 2×; `serve`
 * (migrations checked, HTTP listening) and a store command are shown for scale.
 * Runs are interleaved so that machine noise hits every case alike.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 20);

function once(args: string[], env: NodeJS.ProcessEnv, until?: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let ready: number | null = null;
    child.stderr.on("data", (c) => {
      stderr += c;
      if (until && ready === null && until.test(stderr)) {
        ready = performance.now() - start;
        child.kill("SIGTERM");
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (ready !== null) resolve(ready);
      else if (!until && code === 0) resolve(performance.now() - start);
      else reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`));
    });
  });
}

export async function benchPackage(): Promise<Record<string, string | number>[]> {
  const data = mkdtempSync(path.join(os.tmpdir(), "cohent-bench-package-"));
  // Built inside the workspace (dist/), so the two drivers resolve from its node_modules as from the package's.
  const { dir } = await buildPackage(path.join(process.cwd(), "dist", `package-bench-${process.pid}`));
  const bin = path.join(dir, "bin", "cohent.cjs");
  const env = { PATH: process.env.PATH, HOME: data, COHENT_DATA_DIR: data, COHENT_LOG_LEVEL: "warn" };
  try {
    await once([bin, "repo", "add", "bench/package"], env);
    const cases: [string, () => Promise<number>][] = [
      ["node -e 0", () => once(["-e", "0"], env)],
      ["cohent --version", () => once([bin, "--version"], env)],
      ["cohent --help", () => once([bin, "--help"], env)],
      [
        "cohent sessions list (opens the store)",
        () => once([bin, "sessions", "list", "--repo", "bench/package"], env),
      ],
      ["cohent serve (until listening)", () => once([bin, "serve", "--port", "0"], env, /cohent serving on/)],
    ];
    const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (const [, fn] of cases) await fn(); // warm the file cache
    for (let i = 0; i < RUNS; i++) for (const [name, fn] of cases) times.get(name)!.push(await fn());
    const base = median(times.get("node -e 0")!);
    return cases.map(([name]) => {
      const p50 = median(times.get(name)!);
      return {
        case: name,
        "p50 ms": p50.toFixed(0),
        "× node -e 0": (p50 / base).toFixed(2),
        goal: /--help|--version/.test(name) ? "≤ 2" : "-",
      };
    });
  } finally {
    rmSync(data, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}
