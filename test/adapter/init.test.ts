import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { COHENT_VERSION } from "@cohent/protocol/version";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import {
  CODEX_GUARD_COMMAND,
  CODEX_HOOK_COMMAND,
  FAIL_CLOSED_REASON,
  repoFromRemote,
} from "../../adapter/src/installer/init.js";
import { mergeHooks, mergeSection } from "../../adapter/src/installer/merge-files.js";
import { CLAUDE_PRE_GATE } from "../../adapter/src/installer/claude-wiring.js";
import { OPENCODE_PLUGIN } from "../../adapter/src/installer/opencode-plugin.js";
import { breakAdapter, pathWithoutNode, restoreAdapter } from "../clients/failures.js";

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "cli", "bin", "cohent.mjs");

function sh(
  cwd: string,
  command: string,
  opts: { stdin?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      cwd,
      env: { PATH: process.env.PATH!, HOME: path.join(cwd, "..", "home"), ...opts.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // A command that exits before reading its stdin (node not on PATH) closes the pipe: EPIPE is its answer, not ours.
    child.stdin.on("error", () => {});
    child.stdin.end(opts.stdin ?? "");
  });
}

function scratchRepo(): string {
  const base = mkdtempSync(path.join(os.tmpdir(), "cohent-init-"));
  const root = path.join(base, "repo");
  mkdirSync(root);
  mkdirSync(path.join(base, "home"));
  execFileSync("git", ["init", "-q"], { cwd: root });
  execFileSync("git", ["remote", "add", "origin", "git@github.com:acme/shop.git"], { cwd: root });
  return root;
}

function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === ".git") continue;
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(root, p)] = readFileSync(p, "utf8");
    }
  };
  walk(root);
  return out;
}

let server: TestBackend;
beforeAll(async () => {
  server = await startBackend();
  await server.addRepo("acme/shop", "Ship the new checkout");
});
afterAll(async () => {
  await server?.stop();
});

/** A fresh checkout after `cohent init`, a Codex token for the person, and the PreToolUse command as wired. */
async function initedForCodex(person: string) {
  const root = scratchRepo();
  expect((await sh(root, `node ${CLI} init --server ${server.url}`)).code).toBe(0);
  const token = await server.issueToken("acme/shop", person, "Codex");
  const codexCmd = JSON.parse(readFileSync(path.join(root, ".codex/hooks.json"), "utf8")).hooks.PreToolUse[0]
    .hooks[0].command as string;
  return { root, token, codexCmd };
}

describe("merging helpers", () => {
  it.each([
    ["git@github.com:acme/shop.git", "acme/shop"],
    ["https://github.com/acme/shop", "acme/shop"],
    ["https://github.com/acme/shop.git", "acme/shop"],
    ["ssh://git@github.com/acme/shop.git", "acme/shop"],
    ["https://gitlab.example.com/group/sub/shop.git", "sub/shop"],
    ["not a url", null],
  ])("repoFromRemote(%j)", (url, repo) => {
    expect(repoFromRemote(url)).toBe(repo);
  });
  it("keeps other hooks and their positions, replaces ours in place", () => {
    const theirs = {
      model: "x",
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "lint" }] }] },
    };
    const once = mergeHooks(theirs, [{ event: "PreToolUse", matcher: "*" }, { event: "Stop" }], () => ({
      type: "command",
      command: "node .cohent/cohent.mjs hook",
      timeout: 30,
    }));
    expect(once.model).toBe("x");
    expect(once.hooks.PreToolUse[0]).toEqual(theirs.hooks.PreToolUse[0]);
    expect(once.hooks.PreToolUse[1]).toEqual({
      matcher: "*",
      hooks: [{ type: "command", command: "node .cohent/cohent.mjs hook", timeout: 30 }],
    });
    expect(once.hooks.Stop).toEqual([
      { hooks: [{ type: "command", command: "node .cohent/cohent.mjs hook", timeout: 30 }] },
    ]);
    const twice = mergeHooks(once, [{ event: "PreToolUse", matcher: "*" }, { event: "Stop" }], () => ({
      type: "command",
      command: "node .cohent/cohent.mjs hook",
      timeout: 30,
    }));
    expect(twice).toEqual(once);
  });
  it("replaces the managed section and leaves the rest", () => {
    const once = mergeSection("# Project\n\nOur rules.\n", "A");
    expect(once).toMatch(/^# Project\n\nOur rules\.\n\n<!-- cohent:begin/);
    const twice = mergeSection(once + "\n## After\n", "B");
    expect(twice).toContain("\nB\n<!-- cohent:end -->");
    expect(twice).not.toContain("\nA\n");
    expect(twice).toContain("## After");
  });
});

describe("npx cohent init", () => {
  it("writes every file, merges into existing ones, and a second run changes nothing", async () => {
    const root = scratchRepo();
    writeFileSync(path.join(root, "AGENTS.md"), "# Shop\n\nRun the tests before committing.\n");
    writeFileSync(path.join(root, ".gitignore"), "node_modules\n");
    mkdirSync(path.join(root, ".claude"));
    writeFileSync(
      path.join(root, ".claude", "settings.json"),
      JSON.stringify({
        permissions: { allow: ["Bash(npm test)"] },
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint.sh" }] }] },
      }),
    );

    const first = await sh(root, `node ${CLI} init --server ${server.url}/ --json`);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const envelope = JSON.parse(first.stdout);
    expect(envelope).toMatchObject({
      version: 1,
      ok: true,
      operation: "init",
      data: { repository: "acme/shop", service: server.url },
    });
    const statuses = Object.fromEntries(
      envelope.data.files.map((f: { path: string; status: string }) => [f.path, f.status]),
    );
    expect(statuses).toEqual({
      ".cohent/project.json": "created",
      ".cohent/cohent.mjs": "created",
      ".cohent/cohent.cjs": "created",
      ".cohent/cohent-core.js": "created",
      ".cohent/cohent-mcp.mjs": "created",
      ".gitignore": "updated",
      ".gitattributes": "created",
      "AGENTS.md": "updated",
      ".codex/hooks.json": "created",
      ".claude/settings.json": "updated",
      ".cursor/rules/cohent.mdc": "created",
      ".github/hooks/cohent.json": "created",
      ".gemini/settings.json": "created",
      ".cursor/hooks.json": "created",
      ".opencode/plugin/cohent.js": "created",
      ".github/copilot-instructions.md": "created",
      ".mcp.json": "created",
    });

    const files = snapshot(root);
    expect(JSON.parse(files[".cohent/project.json"]!)).toEqual({
      version: 1,
      service: server.url,
      repository: "acme/shop",
      adapterVersion: COHENT_VERSION,
      // The bytes of each adapter file, as copied: what a session start's wiring check compares.
      adapterFiles: Object.fromEntries(
        ["cohent.mjs", "cohent.cjs", "cohent-core.js", "cohent-mcp.mjs"].map((n) => [
          n,
          "sha256:" + createHash("sha256").update(files[`.cohent/${n}`]!).digest("hex"),
        ]),
      ),
    });
    expect(files[".gitignore"]).toBe(
      "node_modules\n# Cohent: per-machine session state\n.cohent/runtime.json\n.cohent/runtime.json.*\n.cohent/spawn-free/\n.opencode/node_modules/\n",
    );
    expect(files["AGENTS.md"]).toMatch(/^# Shop\n\nRun the tests before committing\.\n\n<!-- cohent:begin/);
    expect(files["AGENTS.md"]).toContain("node .cohent/cohent.mjs intent");
    const claude = JSON.parse(files[".claude/settings.json"]!);
    expect(claude.permissions).toEqual({ allow: ["Bash(npm test)"] });
    expect(claude.hooks.PreToolUse[0].hooks[0].command).toBe("./lint.sh");
    // The guard in the MCP server, and the gate that runs the command hook where Claude Code ignores onFailure.
    expect(claude.hooks.PreToolUse[1]).toEqual({
      matcher: "*",
      hooks: [
        {
          type: "mcp_tool",
          server: "cohent",
          tool: "hook",
          input: expect.objectContaining({ event: "PreToolUse", session_id: "${session_id}" }),
          timeout: 30,
          onFailure: "block",
        },
        { type: "command", command: CLAUDE_PRE_GATE, timeout: 30, onFailure: "block" },
      ],
    });
    expect(JSON.parse(files[".mcp.json"]!)).toEqual({
      mcpServers: { cohent: { command: "node", args: [".cohent/cohent.mjs", "mcp"] } },
    });
    expect(claude.hooks.Stop).toEqual([
      {
        hooks: [
          { type: "command", command: 'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.cjs" hook --host claude' },
        ],
      },
    ]);
    expect(Object.keys(claude.hooks)).toEqual([
      "PreToolUse",
      "SessionStart",
      "UserPromptSubmit",
      "PostToolUse",
      "Stop",
      "SubagentStop",
      "SessionEnd",
    ]);
    const codex = JSON.parse(files[".codex/hooks.json"]!);
    expect(Object.keys(codex.hooks)).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    // Only PreToolUse fails closed: exit 2 would block a prompt, or keep the agent running on Stop.
    expect(codex.hooks.PreToolUse[0].hooks[0]).toEqual({
      type: "command",
      command: CODEX_GUARD_COMMAND,
      timeout: 30,
    });
    expect(codex.hooks.UserPromptSubmit[0].hooks[0]).toEqual({
      type: "command",
      command: "node .cohent/cohent.cjs hook --host codex",
      timeout: 30,
    });
    expect(CODEX_GUARD_COMMAND).toBe(
      `sh -c 'node .cohent/cohent.cjs hook --host codex 2>/dev/null || { echo "${FAIL_CLOSED_REASON}" >&2; exit 2; }'`,
    );
    expect(envelope.data.retrust).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    expect(files[".cursor/rules/cohent.mdc"]).toMatch(/^---\ndescription: .*\nalwaysApply: true\n---/);

    const second = await sh(root, `node ${CLI} init --server ${server.url}`);
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/created|updated/);
    expect(snapshot(root)).toEqual(files);
  }, 60_000);

  it("writes the native wiring of Copilot CLI, Gemini CLI, Cursor and OpenCode exactly, merged into what is there", async () => {
    const root = scratchRepo();
    mkdirSync(path.join(root, ".gemini"));
    const gemini = {
      model: { name: "gemini-2.5-pro" },
      hooks: { BeforeTool: [{ matcher: "write_file", hooks: [{ type: "command", command: "./lint.sh" }] }] },
    };
    writeFileSync(path.join(root, ".gemini", "settings.json"), JSON.stringify(gemini));
    mkdirSync(path.join(root, ".cursor"));
    writeFileSync(
      path.join(root, ".cursor", "hooks.json"),
      JSON.stringify({ version: 1, hooks: { afterFileEdit: [{ command: "prettier --write" }] } }),
    );
    expect((await sh(root, `node ${CLI} init --server ${server.url}`)).code).toBe(0);
    const files = snapshot(root);

    const pre =
      "sh -c 'node .cohent/cohent.cjs hook --host gemini 2>/dev/null || { echo \"" +
      FAIL_CLOSED_REASON +
      "\" >&2; exit 2; }'";
    const copilot = {
      type: "command",
      bash: "node .cohent/cohent.cjs hook --host copilot",
      cwd: ".",
      timeoutSec: 30,
    };
    expect(JSON.parse(files[".github/hooks/cohent.json"]!)).toEqual({
      version: 1,
      hooks: Object.fromEntries(
        [
          "sessionStart",
          "userPromptSubmitted",
          "preToolUse",
          "postToolUse",
          "agentStop",
          "subagentStart",
          "subagentStop",
          "sessionEnd",
        ].map((e) => [e, [copilot]]),
      ),
    });
    const g = (command: string) => ({ type: "command", command, timeout: 30000 });
    const plain = "node .cohent/cohent.cjs hook --host gemini";
    expect(JSON.parse(files[".gemini/settings.json"]!)).toEqual({
      model: { name: "gemini-2.5-pro" },
      // Gemini reads GEMINI.md only, unless told: AGENTS.md holds the protocol's section.
      context: { fileName: ["GEMINI.md", "AGENTS.md"] },
      hooks: {
        BeforeTool: [gemini.hooks.BeforeTool[0], { matcher: "*", hooks: [g(pre)] }],
        SessionStart: [{ hooks: [g(plain)] }],
        BeforeAgent: [{ hooks: [g(plain)] }],
        AfterTool: [{ matcher: "*", hooks: [g(plain)] }],
        AfterAgent: [{ hooks: [g(plain)] }],
        SessionEnd: [{ hooks: [g(plain)] }],
      },
    });
    const cursor = { command: "node .cohent/cohent.cjs hook --host cursor", timeout: 30 };
    expect(JSON.parse(files[".cursor/hooks.json"]!)).toEqual({
      version: 1,
      hooks: {
        afterFileEdit: [{ command: "prettier --write" }],
        sessionStart: [cursor],
        beforeSubmitPrompt: [cursor],
        preToolUse: [{ ...cursor, failClosed: true }],
        postToolUse: [cursor],
        stop: [cursor],
        subagentStart: [cursor],
        subagentStop: [cursor],
        sessionEnd: [cursor],
      },
    });
    expect(files[".opencode/plugin/cohent.js"]).toBe(OPENCODE_PLUGIN);
    expect(files[".gitignore"]).toContain("\n.opencode/node_modules/\n");
    // OpenCode's own install at its next start stays out of git: the ignore rule covers its 64 MB node_modules.
    mkdirSync(path.join(root, ".opencode", "node_modules", "@opencode-ai", "plugin"), { recursive: true });
    writeFileSync(path.join(root, ".opencode", "node_modules", "@opencode-ai", "plugin", "index.js"), "x");
    const untracked = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(untracked).toContain(".opencode/plugin/cohent.js");
    expect(untracked).not.toContain("node_modules");

    const again = await sh(root, `node ${CLI} init --upgrade --json`);
    expect(again.code).toBe(0);
    expect(
      JSON.parse(again.stdout).data.files.filter((f: { status: string }) => f.status !== "unchanged"),
    ).toEqual([]);
    rmSync(path.join(root, ".opencode", "node_modules"), { recursive: true });
    expect(snapshot(root)).toEqual(files);
  }, 60_000);

  it("never clobbers a client file it cannot merge, and then writes nothing at all", async () => {
    for (const [rel, text] of [
      [".gemini/settings.json", "{ hooks: oops"],
      [".cursor/hooks.json", JSON.stringify({ version: 2, hooks: {} })],
      [".github/hooks/cohent.json", "[1, 2]"],
    ] as const) {
      const root = scratchRepo();
      mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
      writeFileSync(path.join(root, rel), text);
      const r = await sh(root, `node ${CLI} init --server ${server.url}`);
      expect(r.code, rel).toBe(1);
      expect(r.stderr).toContain(rel);
      expect(r.stderr).toContain("fix it by hand, then rerun init");
      expect(snapshot(root)).toEqual({ [rel]: text });
    }
  }, 60_000);

  it("upgrades the wiring of an earlier release in place and names the Codex hooks a person must trust again", async () => {
    const root = scratchRepo();
    mkdirSync(path.join(root, ".codex"));
    const plain = { type: "command", command: "node .cohent/cohent.mjs hook", timeout: 30 };
    const old = {
      hooks: {
        SessionStart: [{ hooks: [plain] }],
        UserPromptSubmit: [{ hooks: [plain] }],
        PreToolUse: [
          { matcher: "Bash", hooks: [{ type: "command", command: "./lint.sh" }] },
          { matcher: "*", hooks: [plain] },
        ],
        PostToolUse: [{ matcher: "*", hooks: [plain] }],
        Stop: [{ hooks: [plain] }],
      },
    };
    writeFileSync(path.join(root, ".codex", "hooks.json"), JSON.stringify(old));
    const r = await sh(root, `node ${CLI} init --server ${server.url} --json`);
    expect(r.code).toBe(0);
    // That release ran the cohent.mjs entry: every hook now runs cohent.cjs, so every entry changed.
    expect(JSON.parse(r.stdout).data.retrust).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    const codex = JSON.parse(readFileSync(path.join(root, ".codex", "hooks.json"), "utf8"));
    // In place: the group index, and so every trust key, stays; no second Cohent entry is added.
    expect(codex.hooks.PreToolUse[0].hooks[0].command).toBe("./lint.sh");
    expect(codex.hooks.PreToolUse[1].hooks).toEqual([{ ...plain, command: CODEX_GUARD_COMMAND }]);
    expect(codex.hooks.Stop).toEqual([{ hooks: [{ ...plain, command: CODEX_HOOK_COMMAND }] }]);
    const again = await sh(root, `node ${CLI} init --server ${server.url}`);
    expect(again.stdout).not.toContain("trusts them (again)");
    const fresh = scratchRepo();
    writeFileSync(path.join(fresh, "..", "x"), "");
    mkdirSync(path.join(fresh, ".codex"));
    writeFileSync(path.join(fresh, ".codex", "hooks.json"), JSON.stringify(old));
    const text = await sh(fresh, `node ${CLI} init --server ${server.url}`);
    expect(text.stdout).toContain(
      "Codex skips these hooks until a person trusts them (again) in the Codex TUI here: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop.",
    );
  }, 60_000);

  it("the PreToolUse wiring refuses when the adapter is missing, throws, hangs or node is not on PATH; one short line, no path", async () => {
    const { root, token, codexCmd } = await initedForCodex("fay");
    const claudeCmd = JSON.parse(readFileSync(path.join(root, ".claude/settings.json"), "utf8"))
      .hooks.PreToolUse.at(-1)
      .hooks.find((h: { type: string }) => h.type === "command").command as string;
    const promptCmd = JSON.parse(readFileSync(path.join(root, ".codex/hooks.json"), "utf8")).hooks
      .UserPromptSubmit[0].hooks[0].command as string;
    const env = { COHENT_AGENT_TOKEN: token };
    // The short deadline only where the adapter hangs: a loaded machine must not turn a normal call into a refusal.
    const hangEnv = { ...env, COHENT_HOOK_DEADLINE_MS: "1500" };
    const edit = (sid: string) =>
      JSON.stringify({
        session_id: sid,
        turn_id: "t",
        cwd: root,
        hook_event_name: "PreToolUse",
        model: "gpt-5.5",
        tool_name: "apply_patch",
        tool_input: { command: "*** Begin Patch\n*** Add File: src/a.ts\n+x\n*** End Patch\n" },
      });
    const shell = JSON.stringify({
      session_id: "F",
      turn_id: "t",
      cwd: root,
      hook_event_name: "PreToolUse",
      model: "gpt-5.5",
      tool_name: "Bash",
      tool_input: { command: "echo hi > x.txt" },
    });
    const refusedByWrapper = (r: { code: number | null; stdout: string; stderr: string }) => {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(FAIL_CLOSED_REASON + "\n");
    };
    for (const how of ["missing", "throws"] as const) {
      breakAdapter(root, how);
      refusedByWrapper(await sh(root, codexCmd, { stdin: shell, env }));
      refusedByWrapper(
        await sh(root, claudeCmd, {
          stdin: edit("F"),
          env: { ...env, CLAUDECODE: "1", CLAUDE_PROJECT_DIR: root },
        }),
      );
    }
    restoreAdapter(root);
    const noNode = pathWithoutNode(path.join(root, "..", "no-node-bin"));
    refusedByWrapper(await sh(root, codexCmd, { stdin: shell, env: { ...env, PATH: noNode } }));

    // Hanging: the adapter's own deadline answers a JSON deny before the client's timeout.
    breakAdapter(root, "hangs");
    const t0 = Date.now();
    const hung = await sh(root, codexCmd, { stdin: shell, env: hangEnv });
    // A promised deadline: the adapter's (1.5 s here, COHENT_HOOK_DEADLINE_MS) before the client's
    // 30 s (HOOK_TIMEOUT). 10 s is 6.7 times the deadline and a third of the client's timeout.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(hung.code).toBe(0);
    expect(JSON.parse(hung.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringMatching(
        /^Cohent: the guard did not reach a verdict within 2 s/,
      ),
    });
    restoreAdapter(root);

    // A prompt whose publish hangs fails soft (exit 0, nothing shown); the next edit knows it was missed.
    const prompt = (text: string) =>
      JSON.stringify({
        session_id: "G",
        turn_id: "t",
        cwd: root,
        hook_event_name: "UserPromptSubmit",
        model: "gpt-5.5",
        prompt: text,
      });
    expect((await sh(root, promptCmd, { stdin: prompt("Build the cart"), env })).code).toBe(0);
    const intent = `node .cohent/cohent.mjs intent '{"objective":"Cart","outputs":["cart"]}'`;
    expect((await sh(root, intent, { env: { ...env, COHENT_SESSION: "G" } })).code).toBe(0);
    expect((await sh(root, codexCmd, { stdin: edit("G"), env })).stdout).toBe("");
    breakAdapter(root, "hangs");
    const missed = await sh(root, promptCmd, { stdin: prompt("Now the checkout page"), env: hangEnv });
    expect(missed).toMatchObject({ code: 0, stdout: "" });
    restoreAdapter(root);
    const refused = await sh(root, codexCmd, { stdin: edit("G"), env });
    expect(JSON.parse(refused.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(
      /could not publish this prompt/,
    );
    expect(
      (await sh(root, intent.replace("Cart", "Checkout page"), { env: { ...env, COHENT_SESSION: "G" } }))
        .code,
    ).toBe(0);
    expect((await sh(root, codexCmd, { stdin: edit("G"), env })).stdout).toBe("");
  }, 60_000);

  it("Copilot's, Gemini's and Cursor's pre-tool wiring fail closed the way each client reads a failure: adapter missing, throwing, node not on PATH", async () => {
    const { root, token } = await initedForCodex("hal");
    const read = (rel: string) => JSON.parse(readFileSync(path.join(root, rel), "utf8"));
    const copilot = read(".github/hooks/cohent.json").hooks.preToolUse[0].bash as string;
    const geminiPre = read(".gemini/settings.json").hooks.BeforeTool.at(-1).hooks[0].command as string;
    const geminiPrompt = read(".gemini/settings.json").hooks.BeforeAgent[0].hooks[0].command as string;
    const cursor = read(".cursor/hooks.json").hooks.preToolUse[0].command as string;
    const env = { COHENT_AGENT_TOKEN: token };
    // Each client runs the command through a shell (Copilot and Gemini: bash), in the checkout.
    const copilotPre = JSON.stringify({
      sessionId: "C",
      timestamp: 1,
      cwd: root,
      toolName: "bash",
      toolArgs: { command: "echo x > x.txt" },
    });
    const geminiTool = JSON.stringify({
      session_id: "G",
      cwd: root,
      hook_event_name: "BeforeTool",
      tool_name: "write_file",
      tool_input: { file_path: path.join(root, "a.ts"), content: "x" },
    });
    const cursorPre = JSON.stringify({
      hook_event_name: "preToolUse",
      conversation_id: "K",
      generation_id: "g",
      workspace_roots: [root],
      tool_name: "Write",
      tool_input: { file_path: path.join(root, "a.ts"), content: "x" },
    });
    const noNode = pathWithoutNode(path.join(root, "..", "no-node-bin"));
    const cases: [string, NodeJS.ProcessEnv][] = [
      ["missing", env],
      ["throws", env],
      ["no node", { ...env, PATH: noNode }],
    ];
    for (const [how, e] of cases) {
      if (how !== "no node") breakAdapter(root, how as "missing" | "throws");
      // Copilot: every non-zero exit refuses (measured); nothing on stdout that could read as an allow.
      const c = await sh(root, `bash -c ${JSON.stringify(copilot)}`, {
        stdin: copilotPre,
        env: e as Record<string, string>,
      });
      expect(c.code, `copilot ${how}`).not.toBe(0);
      expect(c.stdout).toBe("");
      // Gemini: exit 2 with the one line (bare, exit 1 would let the tool run).
      const g = await sh(root, `bash -c ${JSON.stringify(geminiPre)}`, {
        stdin: geminiTool,
        env: e as Record<string, string>,
      });
      expect(g, `gemini ${how}`).toMatchObject({ code: 2, stdout: "", stderr: FAIL_CLOSED_REASON + "\n" });
      // The prompt event runs bare: exit 2 there would block the person's prompt.
      expect(
        (
          await sh(root, `bash -c ${JSON.stringify(geminiPrompt)}`, {
            stdin: "{}",
            env: e as Record<string, string>,
          })
        ).code,
      ).not.toBe(2);
      // Cursor: failClosed blocks a non-zero exit and empty stdout (documented).
      const k = await sh(root, cursor, { stdin: cursorPre, env: e as Record<string, string> });
      expect(k.code, `cursor ${how}`).not.toBe(0);
      expect(k.stdout).toBe("");
      restoreAdapter(root);
    }
  }, 60_000);

  it("an internal failure on PreToolUse is a deny whose reason names no absolute path of the machine", async () => {
    const { root, token, codexCmd } = await initedForCodex("gil");
    // Another process holds runtime.json's lock: the adapter gives up after 5 s with an error naming the lock file.
    writeFileSync(path.join(root, ".cohent", "runtime.json.lock"), "");
    const r = await sh(root, codexCmd, {
      stdin: JSON.stringify({
        session_id: "L",
        turn_id: "t",
        cwd: root,
        hook_event_name: "UserPromptSubmit",
        model: "gpt-5.5",
        prompt: "x",
      }),
      env: { COHENT_AGENT_TOKEN: token },
    });
    writeFileSync(path.join(root, ".cohent", "runtime.json.lock"), ""); // fresh again: a lock older than 10 s counts as stale
    const pre = await sh(root, codexCmd, {
      stdin: JSON.stringify({
        session_id: "L",
        turn_id: "t",
        cwd: root,
        hook_event_name: "PreToolUse",
        model: "gpt-5.5",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      }),
      env: { COHENT_AGENT_TOKEN: token },
    });
    const reason = JSON.parse(pre.stdout).hookSpecificOutput.permissionDecisionReason as string;
    expect(reason).toMatch(
      /^Cohent: the adapter failed \(.*runtime\.json stays locked \(\.\/\.cohent\/runtime\.json\.lock\)/,
    );
    expect(reason).not.toContain(root);
    expect(r.code).toBe(0);
  }, 60_000);

  it("refuses without a repository name, and never clobbers a file it cannot merge", async () => {
    const root = scratchRepo();
    execFileSync("git", ["remote", "remove", "origin"], { cwd: root });
    const noRepo = await sh(root, `node ${CLI} init --server ${server.url}`);
    expect(noRepo.code).toBe(1);
    expect(noRepo.stderr).toContain("pass --repo owner/name");
    mkdirSync(path.join(root, ".codex"));
    writeFileSync(path.join(root, ".codex", "hooks.json"), "{ broken");
    const broken = await sh(root, `node ${CLI} init --server ${server.url} --repo acme/shop`);
    expect(broken.code).toBe(1);
    expect(readFileSync(path.join(root, ".codex", "hooks.json"), "utf8")).toBe("{ broken");
  }, 60_000);

  it("the newcomer's walk-through: hooks run exactly as the client files declare them", async () => {
    const root = scratchRepo();
    expect((await sh(root, `node ${CLI} init --server ${server.url}`)).code).toBe(0);
    const alice = await server.issueToken("acme/shop", "alice", "Codex");
    const bob = await server.issueToken("acme/shop", "bob", "Claude Code");
    const codexCmd = JSON.parse(readFileSync(path.join(root, ".codex/hooks.json"), "utf8")).hooks
      .PreToolUse[0].hooks[0].command as string;
    const claudeCmd = JSON.parse(
      readFileSync(path.join(root, ".claude/settings.json"), "utf8"),
    ).hooks.PreToolUse[0].hooks.find((h: { type: string }) => h.type === "command").command as string;
    const codexHook = (payload: object) =>
      sh(root, codexCmd, { stdin: JSON.stringify(payload), env: { COHENT_AGENT_TOKEN: alice } });
    const claudeHook = (payload: object) =>
      sh(root, claudeCmd, {
        stdin: JSON.stringify(payload),
        env: { COHENT_AGENT_TOKEN: bob, CLAUDECODE: "1", CLAUDE_PROJECT_DIR: root },
      });

    const a = await codexHook({
      session_id: "A",
      turn_id: "t",
      cwd: root,
      hook_event_name: "UserPromptSubmit",
      model: "gpt-5.5",
      prompt: "Build the cart API",
    });
    expect(JSON.parse(a.stdout).hookSpecificOutput.additionalContext).toContain("Ship the new checkout");
    const b = await claudeHook({
      session_id: "B",
      cwd: root,
      hook_event_name: "UserPromptSubmit",
      prompt: "Restyle the cart",
    });
    expect(JSON.parse(b.stdout).hookSpecificOutput.additionalContext).toContain("Build the cart API");
    // Session A's PreToolUse, as Codex sends it.
    const codexPreA = (tool_name: string, tool_input: Record<string, unknown>) =>
      codexHook({
        session_id: "A",
        turn_id: "t",
        cwd: root,
        hook_event_name: "PreToolUse",
        model: "gpt-5.5",
        tool_name,
        tool_input,
      });
    const aIntent = `node .cohent/cohent.mjs intent '{"objective":"Cart API","outputs":["cart-api"]}'`;
    expect((await codexPreA("Bash", { command: aIntent })).stdout).toBe("");
    expect((await sh(root, aIntent, { env: { COHENT_AGENT_TOKEN: alice } })).code).toBe(0);
    const patch = "*** Begin Patch\n*** Add File: src/cart.ts\n+x\n*** End Patch\n";
    expect((await codexPreA("apply_patch", { command: patch })).stdout).toBe("");
    const bIntent = `node .cohent/cohent.mjs intent '{"objective":"Cart styles","outputs":["cart-styles"]}'`;
    await claudeHook({
      session_id: "B",
      cwd: root,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: bIntent },
    });
    expect((await sh(root, bIntent, { env: { COHENT_AGENT_TOKEN: bob } })).code).toBe(0);
    const denied = await claudeHook({
      session_id: "B",
      cwd: root,
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: path.join(root, "src/cart.ts") },
    });
    expect(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(
      /overlaps the scope of alice \(Codex gpt-5\.5\)/,
    );
  }, 60_000);
});
