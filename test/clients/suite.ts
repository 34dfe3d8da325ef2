// One client version's conformance suite: every scenario that applies to it,
// each in a fresh workspace (backend, checkout, HOME, CODEX_HOME). Results go
// to test/artifacts/clients-results/<label>.json for the report.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CLIENTS, isInstalled } from "./clients.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { startFakeChat, type FakeChat } from "./fake-chat.ts";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.ts";
import { prepareWorkspace, runClaude, runCodex, type RunResult } from "./harness.ts";
import { MORE_KINDS, runMore } from "./more-harness.ts";
import { RESULTS_DIR } from "./paths.ts";
import { currentLoad, machineCause } from "./retry.ts";
import { Checker, PROMPT, SCENARIOS, type Check, type Ctx } from "./scenarios.ts";
import { knownFailure, moreScenariosFor } from "./scenarios-more.ts";
// Adds `shell-held` to both lists (scenarios.ts, scenarios-more.ts).
import "./scenarios-shell.ts";
// Adds the spawn-free-* scenarios (Claude Code's mcp_tool wiring, issue #44) to scenarios.ts's list.
import "./spawn-free/scenarios.ts";
// Issue 49: the forged mark and disableAllHooks (Claude), a background write (every client).
import "./spawn-free/forged.ts";
import "./scenarios-silent.ts";
// Issue 50 item 2: the checkout's build decides, mid-session (Claude Code, OpenCode).
import "./scenarios-build.ts";
import "./scenarios-stale.ts";

/**
 * COHENT_CLIENTS_INJECT_FIRST_FAILURE: the first attempt of every selected scenario is taken as failed
 * with this cause (after it ran), to show the retry policy on a real run: `product` fails the suite
 * though the retry passes, `ENOSPC` does not.
 */
const INJECT_FIRST_FAILURE: Record<string, string> = {
  product:
    "injected by COHENT_CLIENTS_INJECT_FIRST_FAILURE=product: 1 check(s) failed:\n- [outOfScope] an edit outside the scope was written",
  ENOSPC: "injected by COHENT_CLIENTS_INJECT_FIRST_FAILURE=ENOSPC: ENOSPC: no space left on device, write",
};

export { RESULTS_DIR };

export interface ScenarioResult {
  scenario: string;
  title: string;
  ms: number;
  checks: Check[];
  runs: { code: number | null; ms: number; requests: number }[];
  error?: string;
  /** Set when the first attempt failed: its error, the machine cause that explains it (null: none), whether the retry passed. */
  retry?: { firstError: string; machine: string | null; passed: boolean };
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
  // A version between the pinned ones runs only when named, and only its scenarios (clients.ts `between`).
  const enabled = client.between
    ? selected.includes(client.label)
    : selected.length === 0 || selected.includes(client.label) || selected.includes(client.kind);
  const only = (process.env.COHENT_SCENARIOS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // Copilot CLI, Gemini CLI and OpenCode run their own, leaner list (scenarios-more.ts).
  const more = MORE_KINDS.includes(client.kind);
  const scenarios = (more ? moreScenariosFor(client.kind) : SCENARIOS).filter(
    (s) =>
      (!s.only || s.only === client.kind) &&
      (only.length === 0 || only.includes(s.id)) &&
      (!client.between || client.between.some((p) => s.id.startsWith(p))),
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
  let chat: FakeChat | null = null;
  let gemini: FakeGemini | null = null;

  // A COHENT_SCENARIOS that names none of this client's scenarios skips it rather than leave the suite empty.
  describe.skipIf(!enabled || scenarios.length === 0)(client.label, () => {
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed in the cache; run npx tsx test/clients/install.ts`);
      if (client.kind === "codex") openai = await startFakeOpenAI();
      else if (client.kind === "claude") anthropic = await startFakeAnthropic();
      else if (client.kind === "gemini") gemini = await startFakeGemini();
      else chat = await startFakeChat();
    });
    afterAll(async () => {
      await openai?.close();
      await anthropic?.close();
      await chat?.close();
      await gemini?.close();
      mkdirSync(RESULTS_DIR, { recursive: true });
      writeFileSync(join(RESULTS_DIR, `${client.label}.json`), JSON.stringify(results, null, 2) + "\n");
    });

    for (const scenario of scenarios) {
      /** One attempt in a fresh workspace: its result, its client runs, and its error (null when it passed). */
      const attempt = async (): Promise<{
        result: ScenarioResult;
        runs: RunResult[];
        error: string | null;
      }> => {
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
        const ctx: Ctx = {
          client,
          ws,
          check,
          run: async (steps, opts = {}) => {
            const prompt = opts.prompt ?? PROMPT;
            const r = more
              ? await runMore(client, ws, (chat ?? gemini)!, steps, {
                  prompt,
                  ...(opts.env ? { env: opts.env } : {}),
                  ...(opts.subSteps ? { subSteps: opts.subSteps } : {}),
                })
              : client.kind === "codex"
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
        if (result.error) return { result, runs, error: result.error };
        // Known adapter failures (scenarios-more.ts): reported, not failing; one that passes now fails.
        const matched = new Map<object, boolean>();
        for (const c of check.checks) {
          const k = knownFailure(client, scenario.id, c.name);
          if (!k) continue;
          matched.set(k, (matched.get(k) ?? false) || !c.ok);
          if (!c.ok) c.known = k.why;
        }
        const fixed = [...matched].filter(([, failing]) => !failing);
        if (fixed.length)
          return {
            result,
            runs,
            error: `a known failure no longer fails; remove it from KNOWN_FAILURES (scenarios-more.ts): ${fixed
              .map(([k]) => (k as { check: RegExp }).check)
              .join(", ")}`,
          };
        const failed = check.checks.filter((c) => !c.ok && !c.known);
        if (failed.length) {
          const last = runs.at(-1);
          return {
            result,
            runs,
            error:
              `${failed.length} check(s) failed:\n` +
              failed.map((c) => `- [${c.row}] ${c.name}: ${c.detail}`).join("\n") +
              (last ? `\n--- last client run (exit ${last.code}) stderr:\n${last.stderr.slice(-1500)}` : ""),
          };
        }
        if (check.checks.length === 0) return { result, runs, error: "the scenario checked nothing" };
        return { result, runs, error: null };
      };

      it(`${scenario.id}: ${scenario.title}`, async () => {
        let first = await attempt();
        const injected = INJECT_FIRST_FAILURE[process.env.COHENT_CLIENTS_INJECT_FIRST_FAILURE ?? ""];
        if (injected) first = { ...first, error: injected };
        if (!first.error) {
          results.scenarios.push(first.result);
          return;
        }
        // One retry, fresh workspace; the first failure's cause is printed whatever the retry does.
        const cause = machineCause({
          error: first.error,
          runs: first.runs.map((r) => ({ code: r.code, stderr: r.stderr })),
          load: currentLoad(),
        });
        process.stderr.write(
          `\n[clients] ${client.label} ${scenario.id}: the first attempt failed; ` +
            (cause
              ? `the machine's cause "${cause.id}" (${cause.what}), so a pass on the retry counts`
              : "not one of the machine's causes (test/clients/retry.ts), so it fails the suite whatever the retry does") +
            `. Its cause:\n${first.error}\n`,
        );
        const second = await attempt();
        const retry = { firstError: first.error, machine: cause?.id ?? null, passed: second.error === null };
        results.scenarios.push({ ...second.result, retry });
        if (second.error)
          throw new Error(`${second.error}\n--- the first attempt failed too:\n${first.error}`);
        if (!cause)
          throw new Error(
            `passed only on the retry, and the first failure is not one of the machine's causes, so it counts:\n${first.error}`,
          );
      });
    }
  });
}
