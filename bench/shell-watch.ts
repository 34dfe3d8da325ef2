import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, percentile } from "./lib.js";
import { bundleNames, selfTimes } from "./cpu-profile.js";
import { RUNS, SIZES, LEVELS, GOAL_MS, WRITE, READ, Event, proc, Bench, setUp } from "./shell-watch-setup.js";

/**
 * The check around a shell call (issue 42): for a shell command not known
 * to only read, the hook reads the active peers' claims (one `scopes`
 * request) and snapshots what lies under them plus the guard's own files at
 * PreToolUse (held-call.ts watchCall), and compares at PostToolUse
 * (closeCall). A command known to only read (`cat README.md`) skips all of
 * it: it is the baseline measured beside it, so that
 *   Δ ms = p50(`sh scripts/build.sh`) − p50(`cat README.md`)
 * reads as the added cost. Whole hook processes (node .cohent/cohent.cjs
 * hook, Claude Code payloads), on a generated checkout of 10,000 and of
 * 100,000 files, with 0, 10 and 200 paths claimed by peers (150 files and 50
 * folders of 10 files at 200). Rounds are interleaved: each round visits
 * every (checkout, claims) block in its own order, and each block runs its
 * cases (a Pre then the Post of the same tool_use_id) in its own order.
 *
 * Goal: the check adds at most 5 ms at p50 on the 10,000-file checkout with
 * 200 claims, at PreToolUse and at PostToolUse each.
 *
 * COHENT_BENCH_RUNS (default 20): rounds. COHENT_BENCH_PROFILE=1: after the
 * rounds, one Pre and one Post on 10,000 files / 200 claims under
 * `node --cpu-prof`, top 15 self-time functions of each printed
 * (COHENT_BENCH_PROFILE_RUNS=N sums N of each). COHENT_BENCH_SIZES=10000
 * (comma-separated) runs only those checkouts.
 */

const refused = (out: string) => /"permissionDecision"\s*:\s*"deny"|"decision"\s*:\s*"block"/.test(out);

async function profile(b: Bench): Promise<void> {
  const n = Math.max(1, Number(process.env.COHENT_BENCH_PROFILE_RUNS ?? 1));
  await b.setLevel(200);
  const dirs = { PreToolUse: [] as string[], PostToolUse: [] as string[] };
  const base = mkdtempSync(path.join(os.tmpdir(), "cohent-shell-prof-"));
  try {
    for (let i = 0; i < n; i++) {
      const id = `toolu_prof_${i}`;
      for (const event of ["PreToolUse", "PostToolUse"] as const) {
        const dir = path.join(base, `${event}-${i}`);
        mkdirSync(dir);
        const args = b.scriptArgs(["--cpu-prof", "--cpu-prof-interval=100", `--cpu-prof-dir=${dir}`]);
        const r = await proc(args, b.root, b.env, b.payload(event, WRITE, id));
        if (refused(r.stdout)) throw new Error(`profiled ${event} was refused: ${r.stdout}`);
        dirs[event].push(
          ...readdirSync(dir)
            .filter((f) => f.endsWith(".cpuprofile"))
            .map((f) => path.join(dir, f)),
        );
      }
    }
    const names = await bundleNames(path.join(b.root, ".cohent"));
    if (!names)
      console.log("\n(the bundle could not be rebuilt alike: its functions keep their minified names)");
    for (const event of ["PreToolUse", "PostToolUse"] as const) {
      const { total, rows } = selfTimes(dirs[event], names);
      console.log(
        `\n### Profile: ${event} \`${WRITE}\`, ${b.size} files, 200 claims (node --cpu-prof, 100 µs; ${n} run(s), ${(total / n).toFixed(1)} ms sampled per run)`,
      );
      console.log(
        "| self ms/run | % | function (url, or source line) | under (bundle frames, ms/run) |\n| --- | --- | --- | --- |",
      );
      for (const r of rows.slice(0, 15)) {
        const from = r.from
          .slice(0, 2)
          .map(([c, ms]) => `${c} ${(ms / n).toFixed(1)}`)
          .join("; ");
        console.log(
          `| ${(r.ms / n).toFixed(2)} | ${((100 * r.ms) / total).toFixed(1)} | ${r.name} | ${from} |`,
        );
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

export async function benchShellWatch(): Promise<Record<string, string | number>[]> {
  const started = performance.now();
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const benches: Bench[] = [];
  try {
    for (const size of SIZES) benches.push(await setUp(size));
    const setUpAt = performance.now();
    for (const b of benches)
      console.log(
        `checkout of ${b.size} files: generated in ${(b.generatedMs / 1000).toFixed(1)} s, ${b.committed}`,
      );

    type Key = string;
    const times = new Map<Key, number[]>();
    const push = (k: Key, ms: number) => (times.get(k) ?? times.set(k, []).get(k)!).push(ms);
    const held = new Map<Key, number>();
    const first = new Map<number, { pre: number; post: number; snap: ReturnType<Bench["pending"]> }>();
    let seq = 0;

    // Warm-up: the code cache (a cat call first), then each block once; the first snapshot of the
    // 200 claims reads every held byte into the stash, and is reported as its own row.
    for (const b of benches) {
      await b.hook("PreToolUse", READ, `toolu_w${seq}`);
      await b.hook("PostToolUse", READ, `toolu_w${seq++}`);
      await b.nodeZero();
      for (const level of [200, 10, 0] as const) {
        await b.setLevel(level);
        const id = `toolu_w${seq++}`;
        const pre = await b.hook("PreToolUse", WRITE, id);
        if (refused(pre.stdout)) throw new Error(`${WRITE} was refused: ${pre.stdout}`);
        const snap = b.pending(id);
        held.set(`${b.size}/${level}`, snap.files);
        const post = await b.hook("PostToolUse", WRITE, id);
        if (refused(post.stdout) || post.stdout.includes("Cohent:"))
          throw new Error(`${WRITE}'s check after the call caught something: ${post.stdout}`);
        if (level === 200) first.set(b.size, { pre: pre.ms, post: post.ms, snap });
      }
      // A second pass: every block's snapshot in its steady state (nothing left to read).
      for (const level of LEVELS) {
        await b.setLevel(level);
        const id = `toolu_w${seq++}`;
        await b.hook("PreToolUse", WRITE, id);
        const snap = b.pending(id);
        if (snap.read !== 0)
          console.log(`note: ${b.size}/${level}: steady-state snapshot still read ${snap.read} files`);
        await b.hook("PostToolUse", WRITE, id);
      }
    }

    const warmAt = performance.now();
    const shuffle = <T>(xs: T[]): T[] => {
      const a = [...xs];
      for (let j = a.length - 1; j > 0; j--) {
        const k = Math.floor(Math.random() * (j + 1));
        [a[j], a[k]] = [a[k]!, a[j]!];
      }
      return a;
    };
    const blocks = benches.flatMap((b) => LEVELS.map((level) => ({ b, level })));
    for (let r = 0; r < RUNS; r++) {
      for (const { b, level } of shuffle(blocks)) {
        await b.setLevel(level);
        const cases: (() => Promise<void>)[] = [
          async () => {
            push(`${b.size}/node`, (await b.nodeZero()).ms);
          },
          ...[WRITE, READ].map((command) => async () => {
            const id = `toolu_r${seq++}`;
            const which = command === WRITE ? `write/${level}` : "read";
            const pre = await b.hook("PreToolUse", command, id);
            const post = await b.hook("PostToolUse", command, id);
            // A refusal or a catch would time another path than the one measured.
            if (refused(pre.stdout) || refused(post.stdout) || post.stdout.includes("Cohent:"))
              throw new Error(
                `${command} at ${level} claims was refused or caught: ${pre.stdout}${post.stdout}`,
              );
            push(`${b.size}/${which}/PreToolUse`, pre.ms);
            push(`${b.size}/${which}/PostToolUse`, post.ms);
          }),
        ];
        for (const c of shuffle(cases)) await c();
      }
    }

    const rows: Record<string, string | number>[] = [];
    const fmt = (x: number) => +x.toFixed(1);
    for (const b of benches) {
      const node = median(times.get(`${b.size}/node`)!);
      const row = (
        what: string,
        claims: number | string,
        files: number | string,
        event: string,
        t: number[],
        base: number | null,
        goal = "",
      ): Record<string, string | number> => {
        const p50 = median(t);
        const delta = base === null ? "" : fmt(p50 - base);
        return {
          checkout: b.size,
          claims,
          held_files: files,
          case: what,
          event,
          runs: t.length,
          p50_ms: fmt(p50),
          p95_ms: fmt(percentile(t, 95)),
          ratio: +(p50 / node).toFixed(2),
          delta_ms: delta,
          goal,
          met: goal && typeof delta === "number" ? (delta <= GOAL_MS ? "met" : "NOT met") : "",
        };
      };
      const nodeT = times.get(`${b.size}/node`)!;
      rows.push(row("node -e 0", "", "", "", nodeT, null));
      const base: Record<Event, number> = { PreToolUse: 0, PostToolUse: 0 };
      for (const event of ["PreToolUse", "PostToolUse"] as const) {
        const t = times.get(`${b.size}/read/${event}`)!;
        base[event] = median(t);
        rows.push(row(`${READ} (baseline: no watch)`, "any", 0, event, t, null));
      }
      for (const level of LEVELS)
        for (const event of ["PreToolUse", "PostToolUse"] as const) {
          const goal = b.size === 10_000 && level === 200 ? `Δ ≤ ${GOAL_MS} ms` : "";
          rows.push(
            row(
              WRITE,
              level,
              held.get(`${b.size}/${level}`)!,
              event,
              times.get(`${b.size}/write/${level}/${event}`)!,
              base[event],
              goal,
            ),
          );
        }
      const f = first.get(b.size)!;
      rows.push({
        ...row(
          `${WRITE}, first snapshot (reads ${f.snap.read} files, ${Math.round(f.snap.bytesRead / 1024)} KiB)`,
          200,
          f.snap.files,
          "PreToolUse",
          [f.pre],
          base.PreToolUse,
        ),
        runs: 1,
        p95_ms: "",
      });
      rows.push({
        ...row(
          `${WRITE}, the Post after the first snapshot`,
          200,
          f.snap.files,
          "PostToolUse",
          [f.post],
          base.PostToolUse,
        ),
        runs: 1,
        p95_ms: "",
      });
    }

    const roundsAt = performance.now();
    if (process.env.COHENT_BENCH_PROFILE === "1") {
      const b = benches.find((x) => x.size === 10_000) ?? benches[0]!;
      await profile(b);
    }
    console.log(
      `\nshell-watch: set-up ${s(setUpAt - started)} s, warm-up ${s(warmAt - setUpAt)} s, ${RUNS} rounds ${s(roundsAt - warmAt)} s` +
        (process.env.COHENT_BENCH_PROFILE === "1" ? `, profile ${s(performance.now() - roundsAt)} s` : "") +
        ` (the checkouts' removal follows); load average: ${readFileSync("/proc/loadavg", "utf8").trim()}`,
    );
    return rows;
  } finally {
    for (const b of benches) await b.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = await benchShellWatch();
  const { table } = await import("./lib.js");
  table("Shell watch: the check around a shell call (Δ vs a read-only command)", rows);
  process.exit(0);
}
