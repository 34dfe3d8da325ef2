import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CODEX_GUARD_COMMAND } from "../adapter/src/installer/init.js";
import { supportedLines } from "../scripts/node-lines.mjs";
import { benchCheckout, median, percentile } from "./lib.js";

/**
 * The hook's cold start on every supported Node.js line (scripts/node-lines.mjs): each line's
 * official binary (scripts/node-line.mjs, from the npm registry; the machine's own node for its
 * line) runs the same checkout's hook through the fail-closed wiring init writes, and each row is
 * a ratio to that line's own `node -e 0`, so lines whose start-up differs compare. One session
 * (prompt, intent, scope `src`), one local server, every line's cases interleaved in a fresh order
 * each round. Rows per line: a Read, an in-scope edit, the edit without the adapter's V8 code cache
 * (COHENT_CODE_CACHE=0), and on lines that have it (22+) the edit with Node's own module compile
 * cache (NODE_COMPILE_CACHE): on top of the adapter's cache, and instead of it.
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 20);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The line's binary: this process's Node for its own line, else the official build (installed once). */
function lineBinary(major: number): string {
  if (Number(process.versions.node.split(".")[0]) === major) return process.execPath;
  return execFileSync(process.execPath, [path.join(root, "scripts", "node-line.mjs"), String(major)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

function timed(cmd: string, args: string[], cwd: string, env: Record<string, string>, stdin = "") {
  return new Promise<number>((resolve, reject) => {
    const start = performance.now();
    const child = spawn(cmd, args, { cwd, env, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`${cmd} ${args[0]} exited ${code}`)),
    );
    child.stdin.end(stdin);
  });
}

export async function benchNodeLines(): Promise<Record<string, string | number>[]> {
  const co = await benchCheckout("bench/node-lines", "Codex");
  try {
    const { root: repo, script: entry } = co;
    const base = { PATH: process.env.PATH ?? "", HOME: co.home, COHENT_AGENT_TOKEN: co.token };
    const payload = (p: object) =>
      JSON.stringify({ session_id: "bench", turn_id: "t", cwd: repo, model: "gpt-5.5", ...p });
    const cohent = (args: string[], stdin = "") =>
      timed(process.execPath, [entry, ...args], repo, { ...base, COHENT_SESSION: "bench" }, stdin);
    await cohent(["hook"], payload({ hook_event_name: "UserPromptSubmit", prompt: "bench the lines" }));
    await cohent(["intent", JSON.stringify({ objective: "Bench", outputs: ["bench-out"] })]);
    await cohent(["scope", "src"]);
    const read = payload({
      hook_event_name: "PreToolUse",
      tool_name: "Read",
      tool_input: { file_path: "x" },
    });
    const edit = payload({
      hook_event_name: "PreToolUse",
      tool_name: "apply_patch",
      tool_input: { command: "*** Begin Patch\n*** Update File: src/a.ts\n*** End Patch\n" },
    });

    type Case = { line: number; name: string; run: () => Promise<number> };
    const cases: Case[] = [];
    const versions = new Map<number, string>();
    for (const { major } of supportedLines()) {
      let bin: string;
      try {
        bin = lineBinary(major);
      } catch (err) {
        process.stderr.write(`bench/node-lines: Node ${major} skipped: ${(err as Error).message}\n`);
        continue;
      }
      versions.set(major, execFileSync(bin, ["-p", "process.versions.node"], { encoding: "utf8" }).trim());
      // The wiring runs `node` from PATH: this line's first.
      const env = { ...base, PATH: `${path.dirname(bin)}:${base.PATH}` };
      const hook = (e: Record<string, string>, stdin: string) => () =>
        timed("sh", ["-c", CODEX_GUARD_COMMAND], repo, e, stdin);
      const compileCache = path.join(co.home, `node-compile-cache-${major}`);
      mkdirSync(compileCache, { recursive: true });
      cases.push(
        { line: major, name: "node -e 0", run: () => timed(bin, ["-e", "0"], repo, env) },
        { line: major, name: "Read, as init wires it", run: hook(env, read) },
        { line: major, name: "in-scope edit, as init wires it", run: hook(env, edit) },
        {
          line: major,
          name: "  edit, without the adapter's code cache",
          run: hook({ ...env, COHENT_CODE_CACHE: "0" }, edit),
        },
      );
      if (major >= 22)
        cases.push(
          {
            line: major,
            name: "  edit, with Node's compile cache (NODE_COMPILE_CACHE) too",
            run: hook({ ...env, NODE_COMPILE_CACHE: compileCache }, edit),
          },
          {
            line: major,
            name: "  edit, Node's compile cache instead of the adapter's",
            run: hook({ ...env, NODE_COMPILE_CACHE: compileCache, COHENT_CODE_CACHE: "0" }, edit),
          },
        );
    }
    const times = new Map<Case, number[]>(cases.map((c) => [c, []]));
    for (const c of cases) await c.run(); // warm the file cache; the first decision writes each cache
    for (let i = 0; i < RUNS; i++) {
      const round = [...cases];
      for (let j = round.length - 1; j > 0; j--) {
        const k = Math.floor(Math.random() * (j + 1));
        [round[j], round[k]] = [round[k]!, round[j]!];
      }
      for (const c of round) times.get(c)!.push(await c.run());
    }
    const floor = (line: number) =>
      median(times.get(cases.find((c) => c.line === line && c.name === "node -e 0")!)!);
    return cases.map((c) => {
      const t = times.get(c)!;
      return {
        node: versions.get(c.line)!,
        case: c.name,
        runs: t.length,
        p50_ms: +median(t).toFixed(1),
        p90_ms: +percentile(t, 90).toFixed(1),
        "× this node -e 0": +(median(t) / floor(c.line)).toFixed(2),
      };
    });
  } finally {
    await co.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { table } = await import("./lib.js");
  table("Hook cold start per Node.js line (vs that line's node -e 0)", await benchNodeLines());
  process.exit(0);
}
