// One client version's conformance suite: every scenario that applies to it,
// each in a fresh workspace (backend, checkout, HOME, CODEX_HOME). Results go
// to test/artifacts/clients-results/<label>.json for the report.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CLIENTS, isInstalled } from "./clients.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { prepareWorkspace, runClaude, runCodex, type RunResult } from "./harness.ts";
import { RESULTS_DIR } from "./paths.ts";
import { Checker, PROMPT, SCENARIOS, type Check, type Ctx } from "./scenarios.ts";

export { RESULTS_DIR };

export interface ScenarioResult {
  scenario: string;
  title: string;
  ms: number;
  checks: Check[];
  runs: { code: number | null; ms: number; requests: number }[];
  error?: string;
}

export interface ClientResults {
  client: string;
  kind: string;
  version: string;
  installed: boolean;
  scenarios: ScenarioResult[];
}

export function clientSuite(label: string): void {
  const client = CLIENTS.find((c) => c.label === label);
  if (!client) throw new Error(`unknown client ${label}`);
  const selected = (process.env.COHENT_CLIENTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const enabled = selected.length === 0 || selected.includes(client.label) || selected.includes(client.kind);
  const only = (process.env.COHENT_SCENARIOS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const scenarios = SCENARIOS.filter(
    (s) => (!s.only || s.only === client.kind) && (only.length === 0 || only.includes(s.id)),
  );
  const results: ClientResults = {
    client: client.label,
    kind: client.kind,
    version: client.version,
    installed: isInstalled(client),
    scenarios: [],
  };

  let openai: FakeOpenAI | null = null;
  let anthropic: FakeAnthropic | null = null;

  describe.skipIf(!enabled)(client.label, () => {
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed in the cache; run npx tsx test/clients/install.ts`);
      if (client.kind === "codex") openai = await startFakeOpenAI();
      else anthropic = await startFakeAnthropic();
    });
    afterAll(async () => {
      await openai?.close();
      await anthropic?.close();
      mkdirSync(RESULTS_DIR, { recursive: true });
      writeFileSync(join(RESULTS_DIR, `${client.label}.json`), JSON.stringify(results, null, 2) + "\n");
    });

    for (const scenario of scenarios) {
      it(`${scenario.id}: ${scenario.title}`, async () => {
        const t0 = Date.now();
        const runs: RunResult[] = [];
        const ws = await prepareWorkspace();
        const check = new Checker(ws);
        const result: ScenarioResult = {
          scenario: scenario.id,
          title: scenario.title,
          ms: 0,
          checks: check.checks,
          runs: [],
        };
        results.scenarios.push(result);
        const ctx: Ctx = {
          client,
          ws,
          check,
          run: async (steps, opts = {}) => {
            const prompt = opts.prompt ?? PROMPT;
            const r =
              client.kind === "codex"
                ? await runCodex(client, ws, openai!, steps, {
                    prompt,
                    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
                    ...(opts.keepTrust ? { keepTrust: true } : {}),
                    ...(opts.untrusted ? { untrusted: true } : {}),
                    ...(opts.mcp ? { mcp: true } : {}),
                    ...(opts.env ? { env: opts.env } : {}),
                    ...(opts.codexToml ? { codexToml: opts.codexToml } : {}),
                  })
                : await runClaude(client, ws, anthropic!, steps, {
                    prompt,
                    ...(opts.mcp ? { mcp: true } : {}),
                    ...(opts.env ? { env: opts.env } : {}),
                    ...(opts.subSteps ? { subSteps: opts.subSteps } : {}),
                    ...(opts.claudeMcp ? { claudeMcp: opts.claudeMcp } : {}),
                    ...(opts.hookLog ? { hookLog: true } : {}),
                  });
            runs.push(r);
            return r;
          },
        };
        try {
          await scenario.body(ctx);
        } catch (err) {
          result.error = err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err);
        } finally {
          result.ms = Date.now() - t0;
          result.runs = runs.map((r) => ({ code: r.code, ms: r.ms, requests: r.requests }));
          await ws.dispose();
        }
        if (result.error) throw new Error(result.error);
        const failed = check.checks.filter((c) => !c.ok);
        if (failed.length) {
          const last = runs.at(-1);
          throw new Error(
            `${failed.length} check(s) failed:\n` +
              failed.map((c) => `- [${c.row}] ${c.name}: ${c.detail}`).join("\n") +
              (last ? `\n--- last client run (exit ${last.code}) stderr:\n${last.stderr.slice(-1500)}` : ""),
          );
        }
        if (check.checks.length === 0) throw new Error("the scenario checked nothing");
      });
    }
  });
}
