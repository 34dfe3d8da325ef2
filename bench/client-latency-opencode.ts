// OpenCode's part of bench/client-latency.ts: the real `opencode run` against the scripted Chat
// Completions model (test/clients/fake-chat.ts), in a checkout written by the real `cohent init`.
// Wirings: none (no .opencode/plugin/cohent.js), previous (the plugin before 1305ad3: a
// `node .cohent/cohent.cjs hook --host opencode` process per hook call), new (init's plugin now:
// the adapter required into OpenCode's own process).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chatToolNames, chatToolResults, startFakeChat } from "../test/clients/fake-chat.ts";
import type { ClientSpec } from "../test/clients/clients.ts";
import { prepareWorkspace } from "../test/clients/harness.ts";
import { runMore } from "../test/clients/more-harness.ts";
import { intentCmd, scopeCmd, sh, write } from "../test/clients/scenarios.ts";
import type { Step } from "../test/clients/script.ts";
import { OPENCODE_PLUGIN_FILE } from "../adapter/src/guard/guard-files.ts";
import { median } from "./lib.ts";

export type OpencodeWiring = "none" | "previous" | "new";
export const OPENCODE_WIRINGS: OpencodeWiring[] = ["none", "previous", "new"];
export const OPENCODE_WHAT: Record<OpencodeWiring, string> = {
  none: "no plugin",
  previous: "plugin spawning node per call (before 1305ad3)",
  new: "plugin, adapter in OpenCode's process (init now)",
};

const SRC = new URL("../adapter/src/", import.meta.url).pathname;

/** The plugin text `init` wrote before 1305ad3, from that commit's source (its imports pointed at today's modules). */
async function previousPlugin(): Promise<string> {
  const src = execFileSync("git", ["show", "1305ad3~1:adapter/src/installer/opencode-plugin.ts"], {
    cwd: new URL("..", import.meta.url).pathname,
    encoding: "utf8",
  })
    .replace('"../guard/guard.js"', JSON.stringify(join(SRC, "guard/guard.ts")))
    .replace('"../guard/guard-files.js"', JSON.stringify(join(SRC, "guard/guard-files.ts")))
    .replace('"./host-wiring.js"', JSON.stringify(join(SRC, "installer/host-wiring.ts")));
  const dir = mkdtempSync(join(tmpdir(), "cohent-bench-plugin-"));
  try {
    const file = join(dir, "opencode-plugin-previous.ts");
    writeFileSync(file, src);
    const m = (await import(file)) as { OPENCODE_PLUGIN: string };
    if (/createRequire/.test(m.OPENCODE_PLUGIN)) throw new Error("1305ad3~1's plugin is already in-process");
    return m.OPENCODE_PLUGIN;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Per wiring, per round: the gaps (ms) of writes 1..calls. */
export async function benchOpencode(
  client: ClientSpec,
  wirings: OpencodeWiring[],
  rounds: number,
  calls: number,
  onRun: (line: string) => void,
): Promise<Record<string, number[][]>> {
  const model = await startFakeChat();
  const stamps = new WeakMap<object, number>();
  const push = model.requests.push.bind(model.requests);
  model.requests.push = (...items) => {
    const t = performance.now();
    for (const i of items) stamps.set(i, t);
    return push(...items);
  };
  const ws = await prepareWorkspace();
  const pluginFile = join(ws.repo, OPENCODE_PLUGIN_FILE);
  const { readFileSync } = await import("node:fs");
  const plugins: Record<OpencodeWiring, string | null> = {
    none: null,
    previous: await previousPlugin(),
    new: readFileSync(pluginFile, "utf8"),
  };
  const gaps: Record<string, number[][]> = Object.fromEntries(wirings.map((w) => [w, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      const order = wirings.map((_, i) => wirings[(i + round) % wirings.length]!);
      for (const w of order) {
        const text = plugins[w];
        if (text === null) rmSync(pluginFile, { force: true });
        else writeFileSync(pluginFile, text);
        const steps: Step[] = [
          sh("intent", intentCmd(`Add module ${round}-${w}`, `module-${round}-${w}`, `module-${round}-${w}`)),
          sh("scope", scopeCmd(`src/r${round}-${w}`)),
          ...Array.from({ length: calls }, (_, k) => write(`w${k + 1}`, `src/r${round}-${w}/f${k + 1}.ts`)),
        ];
        const before = model.requests.length;
        const r = await runMore(client, ws, model, steps, { prompt: "Add a feature module to the demo app" });
        const byCount = new Map<number, number>();
        for (const q of model.requests.slice(before)) {
          if (!q.url.includes("/chat/completions") || chatToolNames(q.body).length === 0) continue;
          const n = chatToolResults(q.body).length;
          if (!byCount.has(n)) byCount.set(n, stamps.get(q)!);
        }
        const g: number[] = [];
        for (let k = 1; k <= calls; k++) {
          const a = byCount.get(1 + k);
          const b = byCount.get(2 + k);
          if (a !== undefined && b !== undefined) g.push(b - a);
        }
        const refused = [...r.results.entries()].filter(
          ([id, v]) => id.startsWith("w") && /Cohent: /.test(v.output),
        );
        gaps[w]!.push(g);
        onRun(
          `[bench] ${client.label} round ${round + 1}/${rounds} ${w.padEnd(8)} exit ${r.code} ${g.length}/${calls} calls, ` +
            `median(2..N) ${g.length > 1 ? median(g.slice(1)).toFixed(0) : "-"} ms` +
            (refused.length ? `, ${refused.length} refused! ${refused[0]![1].output.slice(0, 200)}` : ""),
        );
      }
    }
  } finally {
    await ws.dispose();
    await model.close();
  }
  return gaps;
}
