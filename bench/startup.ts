import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CODEX_GUARD_COMMAND } from "../adapter/src/installer/init.js";
import { benchCheckout, median, percentile } from "./lib.js";

/**
 * The hook's one start-up path (docs/decisions/0010-one-start-up-path.md): the warm guard, and the
 * cold call it falls back to. Codex's PreToolUse command as init writes it (the fail-closed
 * wrapper), an in-scope apply_patch and a shell call, p50 of wall time over interleaved rounds,
 * as a ratio to `node -e 0` in the same run:
 * - cold (COHENT_WARM=0): the adapter loaded in the hook's own process, with each cold-only layer
 *   kept switched off in turn (the V8 code cache: COHENT_CODE_CACHE=0; the lean HTTP client:
 *   COHENT_TRANSPORT=node);
 * - the first call of a session: no guard yet (a fresh TMPDIR), so the call runs cold and starts one;
 * - warm: answered by the guard.
 * Then one session's hooks with the environments a client gives its events (a variable set for one
 * event only, another PATH): how many guards it leaves running, and their RSS.
 *
 * COHENT_BENCH_VARIANTS=name=dir,…: other builds' adapter files (a scratch build with a layer
 * removed, or an older commit's dist/adapter), timed beside this one in the same rounds.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 30);

function timed(file: string, args: string[], cwd: string, env: Record<string, string>, stdin = "") {
  return new Promise<number>((resolve, reject) => {
    const start = performance.now();
    const child = spawn(file, args, { cwd, env, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(performance.now() - start)
        : reject(new Error(`${file} ${args.join(" ")}: ${code}`)),
    );
    child.stdin.end(stdin);
  });
}

/** The warm guards of a checkout's builds running now: pid, RSS in MB (from /proc). */
function guardsOf(root: string): { pid: number; rssMb: number }[] {
  const found: { pid: number; rssMb: number }[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0");
      if (argv[2] !== "warm" || !argv[1]!.startsWith(root)) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${e}/status`, "utf8"))?.[1];
      found.push({ pid: Number(e), rssMb: +(Number(rss) / 1024).toFixed(1) });
    } catch {
      /* ended meanwhile */
    }
  }
  return found;
}

export async function benchStartup(): Promise<Record<string, string | number>[]> {
  const co = await benchCheckout("bench/startup", "Codex");
  const tmps: string[] = [];
  const tmp = () => {
    const t = mkdtempSync(path.join(os.tmpdir(), "cohent-bench-warm-"));
    tmps.push(t);
    return t;
  };
  try {
    const { root, script: entry } = co;
    const builds: [name: string, dir: string][] = [["this build", ".cohent"]];
    for (const spec of (process.env.COHENT_BENCH_VARIANTS ?? "").split(",").filter(Boolean)) {
      const [name, from] = spec.split("=") as [string, string];
      const dir = `.cohent-${name.replace(/[^\w-]/g, "_")}`;
      mkdirSync(path.join(root, dir), { recursive: true });
      for (const f of readdirSync(from)) copyFileSync(path.join(from, f), path.join(root, dir, f));
      builds.push([name, dir]);
    }
    const warmDir = tmp();
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: co.home,
      COHENT_AGENT_TOKEN: co.token,
      TMPDIR: warmDir,
      COHENT_WARM_IDLE_MS: "60000",
    };
    const payloadOf = (p: object) =>
      JSON.stringify({ session_id: "bench", turn_id: "t", cwd: root, model: "gpt-5.5", ...p });
    const cmd = (args: string[]) =>
      timed(process.execPath, [entry, ...args], root, { ...env, COHENT_SESSION: "bench" });
    await timed(
      process.execPath,
      [path.join(root, ".cohent/cohent.cjs"), "hook", "--host", "codex"],
      root,
      { ...env, COHENT_WARM: "0" },
      payloadOf({ hook_event_name: "UserPromptSubmit", prompt: "bench start-up" }),
    );
    await cmd(["intent", JSON.stringify({ objective: "Bench", outputs: ["bench-out"] })]);
    await cmd(["scope", "src"]);
    const calls = {
      edit: payloadOf({
        hook_event_name: "PreToolUse",
        tool_name: "apply_patch",
        tool_input: { command: "*** Begin Patch\n*** Update File: src/a.ts\n*** End Patch\n" },
      }),
      shell: payloadOf({
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "git status" },
      }),
    };
    const via = (dir: string) => CODEX_GUARD_COMMAND.replace(".cohent/cohent.cjs", `${dir}/cohent.cjs`);
    const hook = (dir: string, e: Record<string, string>, stdin: string) => () =>
      timed("sh", ["-c", via(dir)], root, e, stdin);
    const cold = { ...env, COHENT_WARM: "0" };
    const cases: [string, () => Promise<number>][] = [
      ["node -e 0", () => timed(process.execPath, ["-e", "0"], root, env)],
    ];
    for (const [name, dir] of builds)
      for (const [what, stdin] of Object.entries(calls)) {
        cases.push([`${name}: ${what}, cold`, hook(dir, cold, stdin)]);
        if (name === "this build") {
          cases.push([
            `${name}: ${what}, cold, no code cache`,
            hook(dir, { ...cold, COHENT_CODE_CACHE: "0" }, stdin),
          ]);
          cases.push([
            `${name}: ${what}, cold, over node:http`,
            hook(dir, { ...cold, COHENT_TRANSPORT: "node" }, stdin),
          ]);
        }
        // No guard yet: a TMPDIR of its own; the guard it starts ends at its first idle check.
        cases.push([
          `${name}: ${what}, first call of a session`,
          () => hook(dir, { ...env, TMPDIR: tmp(), COHENT_WARM_IDLE_MS: "1" }, stdin)(),
        ]);
        cases.push([`${name}: ${what}, warm`, hook(dir, env, stdin)]);
      }
    const times = new Map<string, number[]>(cases.map(([n]) => [n, []]));
    for (const [, fn] of cases) await fn(); // the code caches written, the guards started
    for (let i = 0; i < RUNS; i++) {
      const round = [...cases];
      for (let j = round.length - 1; j > 0; j--) {
        const k = Math.floor(Math.random() * (j + 1));
        [round[j], round[k]] = [round[k]!, round[j]!];
      }
      for (const [name, fn] of round) times.get(name)!.push(await fn());
    }
    const floor = median(times.get("node -e 0")!);
    const rows: Record<string, string | number>[] = cases.map(([name]) => {
      const t = times.get(name)!;
      return {
        case: name,
        runs: t.length,
        p50_ms: +median(t).toFixed(1),
        p90_ms: +percentile(t, 90).toFixed(1),
        ratio: +(median(t) / floor).toFixed(2),
      };
    });

    // One session: the events of a turn, each with the variables a client sets for it.
    const sessionEnvs: Record<string, string>[] = [
      {},
      { CLAUDE_ENV_FILE: path.join(root, "env.sh") },
      { PATH: `/usr/local/sbin:${env.PATH}` },
    ];
    for (const [name, dir] of builds) {
      const t = tmp();
      for (const extra of sessionEnvs)
        for (const stdin of Object.values(calls)) await hook(dir, { ...env, ...extra, TMPDIR: t }, stdin)();
      // The guards the cold calls started: each listens within a second or two of its start.
      await new Promise((r) => setTimeout(r, 3000));
      for (const stdin of Object.values(calls)) await hook(dir, { ...env, TMPDIR: t }, stdin)();
      const running = guardsOf(path.join(root, dir)).filter((g) => {
        try {
          return readFileSync(`/proc/${g.pid}/environ`, "utf8").includes(`TMPDIR=${t}\0`);
        } catch {
          return false;
        }
      });
      rows.push({
        case: `${name}: guards one session leaves (${sessionEnvs.length} environments), RSS each`,
        runs: running.length,
        p50_ms: "",
        p90_ms: "",
        ratio: running.map((g) => `${g.rssMb} MB`).join(", "),
      });
    }
    return rows;
  } finally {
    // The guards this bench started: by pid, not by name.
    for (const g of guardsOf(co.root))
      try {
        process.kill(g.pid);
      } catch {
        /* ended */
      }
    await co.stop();
    for (const t of tmps) rmSync(t, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { table } = await import("./lib.js");
  table("Hook start-up: cold, first call of a session, warm (vs node -e 0)", await benchStartup());
  console.log(`load: ${execFileSync("uptime", { encoding: "utf8" }).trim()}`);
  process.exit(0);
}
