import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { OPENCODE_PLUGIN, OPENCODE_PLUGIN_FILE } from "../adapter/src/installer/opencode-plugin.js";
import { benchCheckout, median, table } from "./lib.js";

/**
 * OpenCode's tool.execute.before, in-process (issue 44: the plugin calls the adapter in OpenCode's
 * own process) against the plugin before it (a `node .cohent/cohent.cjs hook --host opencode`
 * process per call, stdin in, stdout out), on the same in-scope edit against a local backend, in
 * one host process, interleaved call by call. The host is node, and Bun as OpenCode ships it (its
 * binary run as bun, BUN_BE_BUN=1) when test/clients/install.ts installed it.
 *
 *   npx tsx bench/opencode-in-process.ts        # COHENT_BENCH_RUNS (default 30) pairs per host
 */

const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 30);

/** A child run without blocking this process, where the backend answers. */
function runChild(
  bin: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: o.cwd, env: o.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(o.input ?? "");
  });
}

/** The host: loads the plugin once, then per pair one spawned call and one in-process call, in alternating order. */
const HOST = `
const [pluginUrl, root, file, runs] = process.argv.slice(process.argv[1] && process.argv[1].endsWith(".mjs") ? 2 : 1);
const { spawn } = await import("node:child_process");
const m = await import(pluginUrl);
const hooks = await Object.values(m)[0]({ directory: root, worktree: root });
const input = { tool: "write", sessionID: "ses_bench", callID: "c" };
const output = { args: { filePath: file, content: "x" } };
const spawned = () => new Promise((resolve, reject) => {
  const child = spawn("node", [".cohent/cohent.cjs", "hook", "--host", "opencode"], { cwd: root, stdio: ["pipe", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.on("close", (code) => {
    const a = JSON.parse(out);
    code === 0 && a.decision === "allow" ? resolve() : reject(new Error(out));
  });
  child.stdin.end(JSON.stringify({ event: "tool.execute.before", input, output, directory: root }));
});
const inProcess = () => hooks["tool.execute.before"](input, output);
const time = async (f) => { const t0 = performance.now(); await f(); return performance.now() - t0; };
const first = await time(inProcess);
await spawned();
const rows = { first, spawned: [], inProcess: [] };
for (let i = 0; i < Number(runs); i++) {
  if (i % 2) { rows.spawned.push(await time(spawned)); rows.inProcess.push(await time(inProcess)); }
  else { rows.inProcess.push(await time(inProcess)); rows.spawned.push(await time(spawned)); }
}
console.log(JSON.stringify(rows));
process.exit(0);
`;

function opencodeBinary(): string | null {
  const cache = process.env.COHENT_CLIENTS_CACHE || path.join(homedir(), ".cache", "cohent-clients");
  for (const v of ["1.18.33", "1.15.13"]) {
    const bin = path.join(cache, `opencode-ai@${v}`, "node_modules", "opencode-linux-x64", "bin", "opencode");
    if (existsSync(bin)) return bin;
  }
  return null;
}

export async function benchOpencodeInProcess(): Promise<Record<string, string | number>[]> {
  const co = await benchCheckout("bench/opencode", "OpenCode");
  try {
    const { root } = co;
    execFileSync("git", ["init", "-q"], { cwd: root });
    mkdirSync(path.join(root, path.dirname(OPENCODE_PLUGIN_FILE)), { recursive: true });
    writeFileSync(path.join(root, OPENCODE_PLUGIN_FILE), OPENCODE_PLUGIN);
    mkdirSync(path.join(root, "src", "feature"), { recursive: true });
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: co.home,
      COHENT_AGENT_TOKEN: co.token,
      COHENT_USAGE_LOG: "0",
    };
    const hook = (payload: object) =>
      runChild(process.execPath, [path.join(root, ".cohent", "cohent.cjs"), "hook", "--host", "opencode"], {
        cwd: root,
        env,
        input: JSON.stringify(payload),
      });
    // The session's prompt, intent and scope: the edit below is an in-scope allow with its kill-switch read.
    await hook({
      event: "chat.message",
      input: { sessionID: "ses_bench" },
      output: { message: {}, parts: [{ type: "text", text: "Add the feature" }] },
      directory: root,
    });
    const intent = JSON.stringify({
      objective: "Add the feature",
      outputs: ["feature"],
      plan: [],
      components: [],
      dependsOn: [],
      deferred: [],
      requires: [],
      capabilities: [],
      state: "planned",
    });
    for (const args of [
      ["intent", intent],
      ["scope", "src/feature"],
    ]) {
      const r = await runChild(process.execPath, [path.join(root, ".cohent", "cohent.mjs"), ...args], {
        cwd: root,
        env,
      });
      if (r.status !== 0) throw new Error(`${args[0]}: ${r.stderr}`);
    }
    const hosts: [string, string, NodeJS.ProcessEnv][] = [["node", process.execPath, {}]];
    const oc = opencodeBinary();
    if (oc) hosts.push([`bun (OpenCode's binary)`, oc, { BUN_BE_BUN: "1" }]);
    const rows: Record<string, string | number>[] = [];
    for (const [name, bin, extra] of hosts) {
      const args =
        name === "node"
          ? ["--input-type=module", "-e", HOST]
          : (() => {
              const f = path.join(path.dirname(root), "host.mjs");
              writeFileSync(f, HOST);
              return [f];
            })();
      const r = await runChild(
        bin,
        [
          ...args,
          `file://${path.join(root, OPENCODE_PLUGIN_FILE)}`,
          root,
          path.join(root, "src", "feature", "a.ts"),
          String(RUNS),
        ],
        { cwd: root, env: { ...env, ...extra } },
      );
      if (r.status !== 0) throw new Error(`${name} host: ${r.stderr}`);
      const got = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
        first: number;
        spawned: number[];
        inProcess: number[];
      };
      const s = median(got.spawned);
      const i = median(got.inProcess);
      rows.push(
        { host: name, measure: "spawned: node cohent.cjs hook per call (p50)", value: `${s.toFixed(1)} ms` },
        {
          host: name,
          measure: "in-process: the plugin's tool.execute.before (p50)",
          value: `${i.toFixed(2)} ms`,
        },
        { host: name, measure: "ratio spawned / in-process (p50s)", value: `${(s / i).toFixed(0)}x` },
        {
          host: name,
          measure: "in-process, first call (loads the adapter)",
          value: `${got.first.toFixed(1)} ms`,
        },
      );
    }
    return rows;
  } finally {
    await co.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchOpencodeInProcess();
  table(
    `OpenCode tool.execute.before: in-process vs a node process per call (${RUNS} pairs, interleaved)`,
    rows,
  );
}
