import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { recordAfterCall } from "../adapter/src/guard/read-after.js";
import { recordRead } from "../adapter/src/guard/read-record.js";
import { staleWrites } from "../adapter/src/guard/stale-write.js";
import { median } from "./lib.js";

/**
 * The stale-write check's cost per edit (issue 50, item 3): the time of
 * `staleWrites` itself for one target of 1 KB, 100 KB and 1 MB, in a
 * session whose read record holds 500 files. Three states of the target:
 * - unchanged: the steady state, the stat vouches for the bytes (a stat);
 * - touched: a new mtime over the same bytes just before the check, hashed
 *   to find them the same (past a second the new stat is kept: a stat again);
 * - a peer's edit: hashed, the journal read, the changed lines diffed (the
 *   refusal's path; rare).
 * warm: one long-lived guard checking edit after edit (caches kept); cold:
 * the first check in a fresh process, as a command hook makes it (module
 * loading not counted). Goal: at most 2 ms at p50 added to the edit's hook.
 * COHENT_BENCH_RUNS (default 30) warm checks per row, a third of them cold.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 30);
const SIZES: [string, number][] = [
  ["1 KB", 1024],
  ["100 KB", 100 * 1024],
  ["1 MB", 1024 * 1024],
];
const STATES = ["unchanged", "touched", "a peer's edit"] as const;
type State = (typeof STATES)[number];
const ANA = "bench-ana";
const BO = { id: "bench-bo", state: { intentId: "wki_bo", client: "Claude Code" } };
const TARGET = "src/target.ts";

/** Text of about `bytes`, in lines like code. */
const textOf = (bytes: number) => {
  const line = "export const value = compute(input, options); // some code\n";
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
};

/** A checkout where Ana read 500 files and the target; `state` then applied to the target. */
function checkout(size: number, state: State): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "cohent-stale-bench-"));
  mkdirSync(path.join(root, ".git"));
  mkdirSync(path.join(root, "src"));
  const others = Array.from({ length: 500 }, (_, i) => `src/f${i}.ts`);
  for (const f of others) writeFileSync(path.join(root, f), `export const f = 1;\n`);
  writeFileSync(path.join(root, TARGET), textOf(size));
  // Read a while after the files last changed (past the racy second), as a session reads what it works on.
  const later = Date.now() + 2_000;
  recordRead(root, ANA, others, "read", { at: later });
  recordRead(root, ANA, TARGET, "read", { at: later });
  const abs = path.join(root, TARGET);
  if (state === "a peer's edit") {
    writeFileSync(abs, textOf(size).replace("compute", "COMPUTE"));
    recordAfterCall(root, BO, "Write", { file_path: abs }, root, later + 1_000);
  }
  return root;
}

/** One check's ms, and what it found; a touched target is touched again first (a new mtime each time). */
function check(root: string, touch = false): { ms: number; stale: number } {
  if (touch) utimesSync(path.join(root, TARGET), new Date(), new Date(Date.now() + Math.random() * 1e9));
  const t0 = performance.now();
  const n = staleWrites(root, ANA, [TARGET]).length;
  return { ms: performance.now() - t0, stale: n };
}

const SELF = fileURLToPath(import.meta.url);

/** The first check in a fresh process (this file with --once). */
function cold(root: string, touch: boolean): { ms: number; stale: number } {
  const args = ["--import", "tsx", SELF, "--once", root, ...(touch ? ["touch"] : [])];
  const r = spawnSync(process.execPath, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`stale-check --once failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as { ms: number; stale: number };
}

const p50 = (xs: number[]) => Number(median(xs).toFixed(3));

export async function benchStale(): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  for (const [label, size] of SIZES)
    for (const state of STATES) {
      const root = checkout(size, state);
      try {
        const warm: number[] = [];
        const coldMs: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const w = check(root, state === "touched");
          if (w.stale !== (state === "a peer's edit" ? 1 : 0))
            throw new Error(`${label} ${state}: ${w.stale} stale`);
          warm.push(w.ms);
          if (i % 3 === 0) coldMs.push(cold(root, state === "touched").ms);
        }
        rows.push({
          file: label,
          target: state,
          "warm p50 ms": p50(warm),
          "cold p50 ms": p50(coldMs),
          goal: state === "a peer's edit" ? "(a refusal)" : "≤ 2 ms p50",
        });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
  return rows;
}

if (process.argv[2] === "--once") {
  console.log(JSON.stringify(check(process.argv[3]!, process.argv[4] === "touch")));
} else if (process.argv[1] === SELF) {
  const { table } = await import("./lib.js");
  table("The stale-write check's cost per edit", await benchStale());
}
