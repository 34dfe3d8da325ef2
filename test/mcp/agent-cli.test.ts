import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operationSchema, type Operation } from "../../mcp-server/src/schemas.js";
import type { TestBackend } from "../helpers/backend.js";
import {
  git,
  hangingService,
  makeRepo,
  oneJson,
  runAdapter,
  startFixture,
  TOOL_NAMES,
  type Repo,
} from "./helpers.js";

/** The JSON agent CLI: one request in, exactly one v1 envelope on stdout, exit 0 iff ok. */

let backend: TestBackend, repo: Repo, token: string;
beforeAll(async () => {
  ({ backend, repo, token } = await startFixture("bob", "Ship the shop."));
});
afterAll(() => backend?.stop());

const agent = (args: string[], opts: Parameters<typeof runAdapter>[2] = {}) =>
  runAdapter(repo, ["agent", ...args], {
    ...opts,
    env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "agent-cli-1", ...opts.env },
  });

describe("agent CLI", () => {
  it("prints each operation's full schemas without a server, exactly as the source generates them", async () => {
    for (const op of TOOL_NAMES) {
      const r = await runAdapter(repo, ["agent", "schema", "--task", op]);
      expect(r.code).toBe(0);
      // The bundle carries them as adapter/build.mjs generated them; the source generates them here.
      expect(r.stdout).toBe(JSON.stringify(operationSchema(op as Operation)) + "\n");
      const s = oneJson(r.stdout);
      expect(s).toMatchObject({
        version: 1,
        operation: op,
        input: { type: "object", additionalProperties: false },
      });
      expect(s.output.anyOf ?? s.output.oneOf).toHaveLength(2);
    }
    const intent = oneJson((await runAdapter(repo, ["agent", "schema", "--task", "intent"])).stdout);
    expect(intent.input.properties.intent.required).toEqual(["objective"]);
    const bad = await runAdapter(repo, ["agent", "schema", "--task", "review"]);
    expect(bad.code).toBe(1);
    expect(oneJson(bad.stdout).error.code).toBe("INVALID_INPUT");
  });

  it("takes a request on stdin and from a file, and checkpoints the staged paths", async () => {
    const pub = await agent(["publish", "--input", "-"], {
      stdin: JSON.stringify({ version: 1, prompt: "Add search" }),
    });
    expect(pub.code).toBe(0);
    const p = oneJson(pub.stdout);
    expect(p).toMatchObject({ version: 1, ok: true, operation: "publish", data: { action: "plan" } });

    const file = path.join(repo.home, "intent.json");
    writeFileSync(file, JSON.stringify({ intent: { objective: "Search box", outputs: ["search-box"] } }));
    const intent = await agent(["intent", "--input", file]);
    expect(oneJson(intent.stdout)).toMatchObject({
      ok: true,
      data: { intentId: p.data.intentId, action: "proceed" },
    });
    expect(intent.code).toBe(0);

    writeFileSync(path.join(repo.root, "search.ts"), "x\n");
    writeFileSync(path.join(repo.root, "-rf"), "x\n");
    git(repo.root, "add", "search.ts", "--", "-rf");
    const cp = await agent(["checkpoint", "--input", "-", "--repo", repo.root], {
      stdin: '{"status":"working","summary":"box","source":{"kind":"staged"}}',
    });
    expect(oneJson(cp.stdout)).toMatchObject({
      ok: true,
      data: { status: "working", paths: ["-rf", "search.ts"] },
    });
    const rows: any[] = await backend.deps.db.prisma.$transaction((tx: any) =>
      tx.checkpoint.findMany({ where: { intentId: p.data.intentId } }),
    );
    expect(rows.map((r) => r.source)).toEqual(["repository-derived"]);

    const ctx = await agent(["context"]);
    expect(oneJson(ctx.stdout)).toMatchObject({
      ok: true,
      operation: "context",
      data: { intentId: p.data.intentId },
    });
  });

  it("refuses paths over the path bounds with PATHS_TOO_COMPLEX before it sends anything, in every path field and in the human CLI", async () => {
    const hang = await hangingService();
    const held = await makeRepo(hang.url);
    // The request: 64 patterns of 2^95 alternatives each, as minimatch would have expanded them.
    const bomb = Array.from({ length: 64 }, (_, i) => `src/b${i}/` + "{a,b}".repeat(95));
    const env = { COHENT_AGENT_TOKEN: "t", COHENT_SESSION: "s", COHENT_TIMEOUT_MS: "60000" };
    try {
      for (const [op, input] of [
        ["scope", { paths: bomb }],
        ["scope", { paths: bomb, queue: true }],
        ["publish", { prompt: "p", paths: bomb }],
        ["request-release", { paths: bomb }],
        ["checkpoint", { status: "working", source: { kind: "paths", paths: bomb } }],
      ] as const) {
        const r = await runAdapter(held, ["agent", op, "--input", "-"], {
          stdin: JSON.stringify(input),
          env,
        });
        expect(oneJson(r.stdout), op).toMatchObject({
          version: 1,
          ok: false,
          operation: op,
          error: { code: "PATHS_TOO_COMPLEX", retryable: false },
        });
        expect(oneJson(r.stdout).error.message).toContain("at most 128 (pathCost)");
        expect(r.code).toBe(1);
      }
      const human = await runAdapter(held, ["scope", ...bomb.slice(0, 2)], { env });
      expect(human.code).not.toBe(0);
      expect(human.stdout + human.stderr).toContain("at most 128 (pathCost)");
      expect(hang.requests()).toBe(0);
    } finally {
      await hang.stop();
    }
  });

  it("rejects unknown fields, invalid JSON, oversize input, bad flags and a foreign repository, always with one envelope and a non-zero exit", async () => {
    const cases: [string[], string | undefined, string][] = [
      [["scope", "--input", "-"], JSON.stringify({ paths: ["a"], mode: "force" }), "INVALID_INPUT"],
      [
        ["intent", "--input", "-"],
        JSON.stringify({ intent: { objective: "x", secret: 1 } }),
        "INVALID_INPUT",
      ],
      [["publish", "--input", "-"], "{not json", "INVALID_JSON"],
      [["publish", "--input", "-"], JSON.stringify({ prompt: "x".repeat(70_000) }), "PAYLOAD_TOO_LARGE"],
      [["publish", "--input", "/nonexistent/request.json"], undefined, "INVALID_INPUT"],
      [["publish", "--bogus", "1"], undefined, "INVALID_INPUT"],
      [["review", "--input", "-"], "{}", "INVALID_INPUT"],
      [["context", "--repo", "/"], undefined, "INVALID_REPOSITORY"],
    ];
    for (const [args, stdin, code] of cases) {
      const r = await agent(args, stdin === undefined ? {} : { stdin });
      const env = oneJson(r.stdout);
      expect(env, args.join(" ")).toMatchObject({ version: 1, ok: false, error: { code, retryable: false } });
      expect(r.code).toBe(1);
    }
    const details = oneJson(
      (await agent(["scope", "--input", "-"], { stdin: JSON.stringify({ paths: ["a"], mode: "force" }) }))
        .stdout,
    ).error.details;
    expect(JSON.stringify(details)).toContain("mode");
  });

  it("SIGINT during a held backend call aborts it, prints CANCELLED and exits 130", async () => {
    const hang = await hangingService();
    const held = await makeRepo(hang.url);
    try {
      let sent = 0;
      const r = await runAdapter(held, ["agent", "publish", "--input", "-"], {
        stdin: JSON.stringify({ prompt: "held" }),
        env: { COHENT_AGENT_TOKEN: "t", COHENT_SESSION: "s", COHENT_TIMEOUT_MS: "60000" },
        onSpawn: (child) => {
          void hang.waitForRequest().then(() => {
            sent = performance.now();
            child.kill("SIGINT");
          });
        },
      });
      expect(r.code).toBe(130);
      expect(oneJson(r.stdout)).toMatchObject({
        version: 1,
        ok: false,
        operation: "publish",
        error: { code: "CANCELLED", retryable: false },
      });
      // Cancelled on the signal, not at its 60 s timeout (COHENT_TIMEOUT_MS): half of it tells them apart.
      expect(performance.now() - sent).toBeLessThan(30_000);
      await hang.waitForClose();
      expect(hang.closedSockets()).toBe(1);
    } finally {
      await hang.stop();
    }
  });

  it("SIGINT while the request is still being read also exits 130 with CANCELLED", async () => {
    const r = await runAdapter(repo, ["agent", "publish", "--input", "-"], {
      stdin: '{"prompt":',
      keepStdinOpen: true,
      onSpawn: (child) => setTimeout(() => child.kill("SIGINT"), 1_000),
    });
    expect(r.code).toBe(130);
    expect(oneJson(r.stdout).error.code).toBe("CANCELLED");
  });
});

describe("usage ledger", () => {
  it("records metadata-only rows from the agent CLI when COHENT_USAGE_LOG names a file; doctor --cost aggregates, --clear deletes", async () => {
    const ledger = path.join(repo.home, "ledger", "usage.jsonl");
    const secret = "Refactor the billing module with key sk-live-1234567890";
    await agent(["publish", "--input", "-"], {
      stdin: JSON.stringify({ prompt: secret, paths: ["src/billing/secret-plan.ts"] }),
      env: { COHENT_USAGE_LOG: ledger, COHENT_CLIENT: "test-agent" },
    });
    await agent(["context"], { env: { COHENT_USAGE_LOG: ledger } });
    await agent(["scope", "--input", "-"], { stdin: '{"nope":1}', env: { COHENT_USAGE_LOG: ledger } });
    const text = readFileSync(ledger, "utf8");
    expect(text).not.toContain("billing");
    expect(text).not.toContain("secret");
    expect(text).not.toContain(token);
    const rows = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2); // an invalid request never reached an operation
    expect(rows[0]).toMatchObject({
      op: "publish",
      surface: "agent-cli",
      client: "test-agent",
      ok: true,
      repo: "acme/shop",
    });
    expect(rows[0].chars).toBeGreaterThan(0);
    expect(rows[0].tokens).toBe(Math.ceil(rows[0].chars / 4));
    expect(Object.keys(rows[0]).sort()).toEqual([
      "chars",
      "client",
      "model",
      "ms",
      "ok",
      "op",
      "repo",
      "surface",
      "t",
      "tokens",
    ]);

    const cost = await runAdapter(repo, ["doctor", "--cost", "--json"], {
      env: { COHENT_USAGE_LOG: ledger },
    });
    const report = oneJson(cost.stdout).data;
    expect(report).toMatchObject({ file: ledger, recording: true, rows: 2 });
    expect(report.by.operation.map((g: any) => g.key).sort()).toEqual(["context", "publish"]);
    expect(report.by.surface).toEqual([expect.objectContaining({ key: "agent-cli", calls: 2 })]);

    const off = await agent(["context"], { env: { COHENT_USAGE_LOG: "0" } });
    expect(off.code).toBe(0);
    expect(readFileSync(ledger, "utf8").trim().split("\n")).toHaveLength(2);

    const clear = await runAdapter(repo, ["doctor", "--clear"], { env: { COHENT_USAGE_LOG: ledger } });
    expect(clear.code).toBe(0);
    expect(existsSync(ledger)).toBe(false);
  });

  it("the hook and the plain commands record rows too (surfaces hook and cli), with the verdict and the injected characters", async () => {
    const ledger = path.join(repo.home, "ledger", "hook-usage.jsonl");
    const env = { COHENT_AGENT_TOKEN: token, COHENT_USAGE_LOG: ledger, CLAUDECODE: "1" };
    const payload = (o: object) => JSON.stringify({ session_id: "usage-hook", cwd: repo.root, ...o });
    await runAdapter(repo, ["hook"], {
      env,
      stdin: payload({ hook_event_name: "UserPromptSubmit", prompt: "PROMPT-CANARY refactor" }),
    });
    const denied = await runAdapter(repo, ["hook"], {
      env,
      stdin: payload({
        hook_event_name: "PreToolUse",
        tool_name: "Write",
        tool_input: { file_path: path.join(repo.root, "secret-target.ts"), content: "x" },
      }),
    });
    expect(denied.stdout).toContain('"permissionDecision":"deny"');
    await runAdapter(repo, ["context"], { env: { ...env, COHENT_SESSION: "usage-hook" } });
    const text = readFileSync(ledger, "utf8");
    expect(text).not.toContain("PROMPT-CANARY");
    expect(text).not.toContain("secret-target");
    const rows = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.op, r.surface, r.ok])).toEqual([
      ["hook:UserPromptSubmit", "hook", true],
      ["hook:PreToolUse", "hook", false],
      ["context", "cli", true],
    ]);
    expect(rows[0]).toMatchObject({ client: "Claude Code", repo: "acme/shop" });
    expect(rows[0].chars).toBeGreaterThan(0);
    expect(rows[1].code).toBe("DENIED");
  });

  it("the stored preference applies when COHENT_USAGE_LOG is unset, and the variable wins over it", async () => {
    const cache = path.join(repo.home, "xdg-cache");
    const env = { XDG_CACHE_HOME: cache, COHENT_USAGE_LOG: undefined };
    expect((await runAdapter(repo, ["doctor", "--usage", "on"], { env })).code).toBe(0);
    await agent(["context"], { env });
    const file = path.join(cache, "cohent", "usage.jsonl");
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(1);
    await agent(["context"], { env: { ...env, COHENT_USAGE_LOG: "0" } });
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(1);
    expect((await runAdapter(repo, ["doctor", "--usage", "off"], { env })).code).toBe(0);
    await agent(["context"], { env });
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(1);
  });
});
