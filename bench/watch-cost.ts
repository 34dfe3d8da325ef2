import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SessionFile } from "@cohent/client";
import { closeCalls, watchCall } from "../adapter/src/held/call.js";
import { stashDir } from "../adapter/src/held/stash.js";
import { enableLiveView } from "../adapter/src/held/live.js";
import type { PeerScope } from "../adapter/src/git/git-guard.js";
import { median } from "./lib.js";
import { claimsOf, generate, LEVELS, pathsAt, PEERS, type Level } from "./shell-watch-setup.js";

/**
 * The watch's own cost (issue 49): what every shell call and every
 * PostToolUse now spends on it, measured as the time of the watch's code
 * itself (a call with no watch spends none of it), so no baseline process
 * is needed. Pre: the comparison with the checkout's last known state and
 * the call's snapshot (closeCalls + watchCall); Post: the call's check and
 * the comparison again (closeCalls). On generated checkouts of 10,000 and
 * 100,000 files with 0, 10 and 200 peers' claims (656 held files at 200).
 *
 * - warm: one long-lived process making call after call, as Claude Code's
 *   MCP server, the warm guard and OpenCode's plugin do (caches kept);
 * - cold: each call in a fresh process, as a command hook (module loading
 *   not counted: the hook pays it whatever the watch does);
 * - first snapshot: a fresh process on a checkout whose stash is empty,
 *   reading and keeping every held file's bytes.
 * Goals: p50 at most 5 ms at 200 claims warm, Pre and Post each; at most
 * 50 ms for the first snapshot. COHENT_BENCH_RUNS (default 20) rounds;
 * COHENT_BENCH_SIZES=10000 runs one size; COHENT_BENCH_PROFILE=1 prints
 * the self time per function of 20 warm calls at 200 claims.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 20);
const SIZES = (process.env.COHENT_BENCH_SIZES ?? "10000,100000").split(",").map(Number);
const SESSION = "bench-watch";
const ONCE = fileURLToPath(new URL("./watch-once.ts", import.meta.url));

/** The peers' claims at a level, as the service would answer them. */
export function peersAt(size: number, level: Level): PeerScope[] {
  return claimsOf(size)
    .map((c, k) => ({
      intentId: `wki_peer${k}`,
      person: `peer${k}`,
      client: "Claude Code",
      model: null,
      paths: pathsAt(level, k, c),
    }))
    .filter((p) => p.paths.length > 0)
    .slice(0, PEERS);
}

/** One watched call's two ends, in this process: ms of each. */
export async function watchedCall(
  root: string,
  peers: PeerScope[],
  id: string,
): Promise<{ pre: number; post: number }> {
  const s = new SessionFile(root, SESSION);
  s.set({ intentId: "wki_bench", scope: ["scripts/"], polledAt: Date.now() });
  s.save(); // as every hook call does: runtime.json written in .cohent/
  const t0 = performance.now();
  await closeCalls(root, s, undefined, {});
  await watchCall(root, s, id, { tool: "Bash", command: "sh scripts/build.sh", peers }, {});
  const t1 = performance.now();
  // The tool runs: a long-lived guard writes the pending snapshot's file after its answer, not within Pre.
  await new Promise((r) => setImmediate(r));
  const t1b = performance.now();
  await closeCalls(root, new SessionFile(root, SESSION, s.state), id, {});
  const t2 = performance.now();
  return { pre: t1 - t0, post: t2 - t1b };
}

function checkout(size: number): string {
  const root = mkdtempSync(path.join(os.tmpdir(), `cohent-watch-${size}-`));
  generate(root, size);
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: root });
  return root;
}

/** A fresh process's one call (watch-once.ts): its Pre and Post ms, and whether the stash was empty. */
function cold(root: string, size: number, level: Level, id: string): { pre: number; post: number } {
  const r = spawnSync(process.execPath, ["--import", "tsx", ONCE, root, String(size), String(level), id], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`watch-once failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as { pre: number; post: number };
}

const p50 = (xs: number[]) => Number(median(xs).toFixed(2));

/** Self time per function over 20 warm calls (the inspector's sampling profiler, 100 µs), top 15. */
async function profile(root: string, peers: PeerScope[]): Promise<void> {
  const { Session } = await import("node:inspector/promises");
  const s = new Session();
  s.connect();
  await s.post("Profiler.enable");
  await s.post("Profiler.setSamplingInterval", { interval: 100 });
  await s.post("Profiler.start");
  const n = 20;
  for (let i = 0; i < n; i++) await watchedCall(root, peers, `toolu_p${i}`);
  const { profile: p } = await s.post("Profiler.stop");
  s.disconnect();
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  (p.samples ?? []).forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const k = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + (p.timeDeltas?.[i] ?? 0));
  });
  console.log(
    `\n### Profile: ${n} warm watched calls (Pre and Post), 200 claims\n\n| self ms/call | function |\n| --- | --- |`,
  );
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`| ${(us / 1000 / n).toFixed(2)} | ${k} |`);
}

export async function benchWatch(): Promise<Record<string, string | number>[]> {
  // This process is the long-lived guard; each cold call is a child with the direct view.
  enableLiveView();
  const rows: Record<string, string | number>[] = [];
  for (const size of SIZES) {
    const root = checkout(size);
    try {
      for (const level of LEVELS) {
        const peers = peersAt(size, level);
        // First snapshot: nothing kept yet, in a fresh process.
        rmSync(stashDir(root), { recursive: true, force: true });
        const first = cold(root, size, level, "toolu_first");
        const warm = { pre: [] as number[], post: [] as number[] };
        const coldRuns = { pre: [] as number[], post: [] as number[] };
        for (let i = 0; i < RUNS; i++) {
          const w = await watchedCall(root, peers, `toolu_w${i}`);
          warm.pre.push(w.pre);
          warm.post.push(w.post);
          if (i < Math.min(RUNS, 10)) {
            const c = cold(root, size, level, `toolu_c${i}`);
            coldRuns.pre.push(c.pre);
            coldRuns.post.push(c.post);
          }
        }
        if (level === 200 && process.env.COHENT_BENCH_PROFILE === "1") await profile(root, peers);
        rows.push({
          files: size,
          claims: level,
          "warm Pre p50 ms": p50(warm.pre),
          "warm Post p50 ms": p50(warm.post),
          "cold Pre p50 ms": p50(coldRuns.pre),
          "cold Post p50 ms": p50(coldRuns.post),
          "first snapshot (Pre) ms": Number(first.pre.toFixed(1)),
          "goal (warm, 200 claims)": level === 200 ? "≤ 5 / ≤ 5; first ≤ 50" : "",
        });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { table } = await import("./lib.js");
  table("The watch's cost per call", await benchWatch());
  writeFileSync(path.join(os.tmpdir(), "cohent-watch-cost.done"), "");
}
