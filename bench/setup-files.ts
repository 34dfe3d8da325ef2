import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, type Plugin } from "esbuild";
import pg from "pg";
import { median, table } from "./lib.js";

/**
 * A company's set-up (issue 52): one `cohent repo add` / `cohent token issue` per item against the
 * batch forms (`--file`, one process and one transaction for the whole file), per item, on SQLite and
 * (when it answers on 127.0.0.1:5432) PostgreSQL. The CLI is compiled as `npm run pack` compiles it
 * (esbuild, lib/cli.mjs run as the package's bin runs it); "before" is the same build with the
 * Prisma client loaded by every store command, as it was until the admin CLI opened its store with
 * `inspect: false`. Runs are interleaved so that machine noise hits every case alike; the figures
 * are medians and ratios within this run. A script run by hand (`npx tsx bench/setup-files.ts`),
 * not part of `npm run bench` or the tests.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 10);
const BATCH = Number(process.env.COHENT_BENCH_BATCH ?? 1_000);
const BIG = Number(process.env.COHENT_BENCH_BIG ?? 10_000);
const PG_BASE = process.env.COHENT_BENCH_PG ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const root = process.cwd();
const work = path.join(root, "dist", `setup-bench-${process.pid}`);

/** The admin CLI as the package compiles it, into `dir`/lib, and a runner like the package's bin. */
async function compile(dir: string, before: boolean): Promise<string> {
  const plugins: Plugin[] = before
    ? [
        {
          name: "prisma-loaded",
          setup(b) {
            b.onLoad({ filter: /backend[\\/]src[\\/]cli\.ts$/ }, (args) => ({
              contents: readFileSync(args.path, "utf8").replace("{ inspect: false }", "{}"),
              loader: "ts",
            }));
          },
        },
      ]
    : [];
  await build({
    entryPoints: { cli: path.join(root, "backend", "src", "cli.ts") },
    outdir: path.join(dir, "lib"),
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    target: "node20",
    format: "esm",
    minify: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "warning",
    external: ["better-sqlite3", "better-sqlite3/*", "pg", "pg/*"],
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    plugins,
  });
  const runner = path.join(dir, "cohent.mjs");
  writeFileSync(runner, 'const { main } = await import("./lib/cli.mjs");\nawait main();\n');
  return runner;
}

/** One process to its exit: wall milliseconds, and its stdout. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve({ ms: performance.now() - start, stdout })
        : reject(new Error(`${args.slice(1).join(" ")} exited ${code}: ${stderr}`)),
    );
  });
}

async function postgres(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const name = `cohent_setup_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_BASE, connectionTimeoutMillis: 2_000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch {
    return null;
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(PG_BASE);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_BASE });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

async function benchDatabase(label: string, databaseUrl: string, bins: { before: string; after: string }) {
  const data = mkdtempSync(path.join(os.tmpdir(), "cohent-setup-bench-"));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: data, COHENT_LOG_LEVEL: "warn" };
  if (databaseUrl.startsWith("file:")) env.COHENT_DATA_DIR = path.dirname(databaseUrl.slice("file:".length));
  else env.DATABASE_URL = databaseUrl;
  const files = mkdtempSync(path.join(os.tmpdir(), "cohent-setup-files-"));
  try {
    await run([bins.after, "repo", "add", "bench/base"], env); // migrates
    let n = 0;
    const single = {
      before: { repo: [] as number[], token: [] as number[] },
      after: { repo: [] as number[], token: [] as number[] },
    };
    const nodeOnly: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      nodeOnly.push((await run(["-e", "0"], env)).ms);
      for (const which of ["before", "after"] as const) {
        single[which].repo.push((await run([bins[which], "repo", "add", `bench/one-${++n}`], env)).ms);
        single[which].token.push(
          (await run([bins[which], "token", "issue", "--repo", "bench/base", "--person", `p${++n}`], env)).ms,
        );
      }
    }
    const batch = async (size: number, runs: number) => {
      const repo: number[] = [];
      const token: number[] = [];
      for (let r = 0; r < runs; r++) {
        const names = Array.from({ length: size }, (_, i) => `bench-${size}-${r}/repo-${i}`);
        const repos = path.join(files, `repos-${size}-${r}.txt`);
        writeFileSync(repos, names.join("\n") + "\n");
        const added = await run([bins.after, "repo", "add", "--file", repos], env);
        if (added.stdout.trim().split("\n").length !== size)
          throw new Error("repo add --file: lines missing");
        repo.push(added.ms);
        const agents = path.join(files, `agents-${size}-${r}.jsonl`);
        writeFileSync(
          agents,
          names.map((repo, i) => JSON.stringify({ repo, person: `dev-${i}` })).join("\n") + "\n",
        );
        const issued = await run([bins.after, "token", "issue", "--file", agents], env);
        if (issued.stdout.trim().split("\n").length !== size)
          throw new Error("token issue --file: lines missing");
        token.push(issued.ms);
      }
      return { repo: median(repo), token: median(token) };
    };
    const small = await batch(BATCH, 3);
    const big = await batch(BIG, 1);
    const base = median(nodeOnly);
    const perItemSingle = { repo: median(single.after.repo), token: median(single.after.token) };
    const row = (what: string, kind: "repo" | "token", items: number, ms: number) => ({
      database: label,
      case: what,
      items,
      "ms (whole)": ms.toFixed(0),
      "ms per item": (ms / items).toFixed(items > 1 ? 3 : 0),
      "items / s": Math.round((items * 1000) / ms),
      "per-item speed-up (one call = 1)": (perItemSingle[kind] / (ms / items)).toFixed(items > 1 ? 0 : 2),
    });
    return [
      { ...row("node -e 0 (baseline)", "repo", 1, base), "per-item speed-up (one call = 1)": "-" },
      row("repo add <name>, before (Prisma loaded)", "repo", 1, median(single.before.repo)),
      row("repo add <name>", "repo", 1, perItemSingle.repo),
      row(`repo add --file (${BATCH} lines)`, "repo", BATCH, small.repo),
      row(`repo add --file (${BIG} lines)`, "repo", BIG, big.repo),
      row("token issue, before (Prisma loaded)", "token", 1, median(single.before.token)),
      row("token issue", "token", 1, perItemSingle.token),
      row(`token issue --file (${BATCH} lines)`, "token", BATCH, small.token),
      row(`token issue --file (${BIG} lines)`, "token", BIG, big.token),
    ];
  } finally {
    rmSync(data, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
}

async function main() {
  mkdirSync(work, { recursive: true });
  try {
    const bins = {
      before: await compile(path.join(work, "before"), true),
      after: await compile(path.join(work, "after"), false),
    };
    const rows = [];
    const sqliteDir = mkdtempSync(path.join(os.tmpdir(), "cohent-setup-sqlite-"));
    try {
      rows.push(...(await benchDatabase("SQLite", `file:${path.join(sqliteDir, "cohent.sqlite")}`, bins)));
    } finally {
      rmSync(sqliteDir, { recursive: true, force: true });
    }
    const pgDb = await postgres();
    if (pgDb)
      try {
        rows.push(...(await benchDatabase("PostgreSQL", pgDb.url, bins)));
      } finally {
        await pgDb.drop();
      }
    table(
      `Set-up: one call per item against --file (Node ${process.version}, ${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" / ")})`,
      rows,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
