// The stand-in-hook probes of Gemini CLI: `.gemini/settings.json` command
// hooks (BeforeTool and every other event), the deny forms, each failure mode
// bare and behind Codex's fail-closed wrapper, and the folder-trust gate.
// Each probe is one or a few `gemini -p … --yolo` runs.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ClientSpec } from "./clients.ts";
import { SUBAGENT_MARK } from "./fake-chat.ts";
import type { FakeGemini } from "./fake-gemini.ts";
import { MCP_SERVER } from "./harness.ts";
import { hookCalls, runGemini, setPlan, standinCommand, type ProbeWorkspace } from "./probe-harness.ts";
import { Checks, fixtures, gate, namedCalls, type Outcome } from "./probe-kit.ts";
import type { Step } from "./script.ts";

/** Every hook event Gemini CLI 0.58.0 and 0.61.0 know (read off the bundle). */
export const GEMINI_EVENTS = [
  "SessionStart",
  "SessionEnd",
  "BeforeAgent",
  "AfterAgent",
  "BeforeModel",
  "AfterModel",
  "BeforeToolSelection",
  "BeforeTool",
  "AfterTool",
  "Notification",
  "PreCompress",
];

/** Codex's fail-closed wrapper (docs/clients.md), around the stand-in. */
export const wrapped = (command: string) =>
  `sh -c '${command} || { echo "cohent: hook failed, refusing" >&2; exit 2; }'`;

export function writeGeminiHooks(
  ws: ProbeWorkspace,
  events: string[],
  opts: { timeoutMs?: number; command?: (event: string) => string; extra?: Record<string, unknown> } = {},
): void {
  const entry = (e: string) => ({
    type: "command",
    command: (opts.command ?? ((x) => standinCommand(ws, x)))(e),
    timeout: opts.timeoutMs ?? 30_000,
  });
  const hooks = Object.fromEntries(
    events.map((e) => [e, [/Tool$/.test(e) ? { matcher: "*", hooks: [entry(e)] } : { hooks: [entry(e)] }]]),
  );
  mkdirSync(join(ws.repo, ".gemini"), { recursive: true });
  writeFileSync(join(ws.repo, ".gemini", "settings.json"), JSON.stringify({ hooks, ...opts.extra }, null, 2));
}

const sh = (id: string, command: string): Step => ({
  id,
  action: { kind: "tool", name: "run_shell_command", args: { command, description: id } },
});
const touch = (id: string) => sh(id, `echo ${id} > ${id}.txt`);
const write = (ws: ProbeWorkspace, id: string, rel: string): Step => ({
  id,
  action: { kind: "tool", name: "write_file", args: { file_path: join(ws.repo, rel), content: `${id}\n` } },
});
const deny = (reason: string) => JSON.stringify({ decision: "deny", reason });

interface Ctx {
  client: ClientSpec;
  ws: ProbeWorkspace;
  model: FakeGemini;
  c: Checks;
  notes: string[];
}

/** Measured: what each failure of a BeforeTool command does to the call, bare and wrapped. */
export const GEMINI_FAIL: Record<string, { bare: Outcome; wrapped: Outcome }> = {
  "fail-exit1": { bare: "open", wrapped: "closed" },
  "fail-throw": { bare: "open", wrapped: "closed" },
  "fail-nonjson": { bare: "open", wrapped: "open" },
  "fail-empty": { bare: "open", wrapped: "open" },
  "fail-exit2-empty": { bare: "open", wrapped: "closed" },
  "fail-hang": { bare: "open", wrapped: "open" },
};

async function failRun({ client, ws, model, c, notes }: Ctx, wrap: boolean): Promise<void> {
  writeGeminiHooks(ws, ["BeforeTool"], {
    timeoutMs: 6000,
    command: (e) => (wrap ? wrapped(standinCommand(ws, e)) : standinCommand(ws, e)),
  });
  setPlan(ws, [
    { match: "fail-exit1", stderr: "boom", exit: 1 },
    { match: "fail-throw", throw: true },
    { match: "fail-nonjson", stdout: "this is not json" },
    { match: "fail-exit2-empty", exit: 2 },
    { match: "fail-hang", sleepMs: 15_000, stdout: deny("R-LATE") },
  ]);
  const ids = Object.keys(GEMINI_FAIL);
  const r = await runGemini(client, ws, model, ids.map(touch), { prompt: "do it" });
  for (const id of ids) gate(c, ws, r, id, `${id}.txt`, GEMINI_FAIL[id]![wrap ? "wrapped" : "bare"]);
  notes.push(
    ...ids.map((id) => `${wrap ? "wrapped " : ""}${id}: ${JSON.stringify(r.results.get(id) ?? null)}`),
  );
}

export const GEMINI_PROBES = [
  {
    id: "payloads",
    title: "every event's payload, the tools' names and inputs, a sub-agent's calls, the hook's env",
    async body({ client, ws, model, c, notes }: Ctx) {
      writeGeminiHooks(ws, GEMINI_EVENTS);
      setPlan(ws, []);
      const r = await runGemini(
        client,
        ws,
        model,
        [
          write(ws, "create", "src/new.ts"),
          {
            id: "edit",
            action: {
              kind: "tool",
              name: "replace",
              args: {
                file_path: join(ws.repo, "src/app.ts"),
                old_string: "export const app = 1;",
                new_string: "export const app = 2;",
                instruction: "bump",
              },
            },
          },
          sh("shell", "echo hi > shell.txt"),
          {
            id: "read",
            action: { kind: "tool", name: "read_file", args: { file_path: join(ws.repo, "README.md") } },
          },
          {
            id: "agent",
            action: {
              kind: "tool",
              name: "invoke_agent",
              args: { agent_name: "generalist", prompt: `${SUBAGENT_MARK}: write sub.txt` },
            },
          },
        ],
        { prompt: "do it", subSteps: [sh("sub-shell", "echo sub > sub.txt")] },
      );
      c.eq("exit code", r.code, 0);
      c.ok(
        "offers write_file, replace, run_shell_command, read_file, invoke_agent",
        ["write_file", "replace", "run_shell_command", "read_file", "invoke_agent"].every((t) =>
          r.tools.includes(t),
        ),
        r.tools,
      );
      const fired = new Set(r.hooks.map((h) => h.label));
      c.ok(
        "fires SessionStart, BeforeAgent, BeforeModel, AfterModel, BeforeToolSelection, BeforeTool, AfterTool, AfterAgent, SessionEnd",
        [
          "SessionStart",
          "BeforeAgent",
          "BeforeModel",
          "AfterModel",
          "BeforeToolSelection",
          "BeforeTool",
          "AfterTool",
          "AfterAgent",
          "SessionEnd",
        ].every((e) => fired.has(e)),
        [...fired].sort(),
      );
      const before = r.hooks.filter((h) => h.label === "BeforeTool").map((h) => h.payload);
      c.eq(
        "BeforeTool tool names",
        before.map((p) => p.tool_name),
        ["write_file", "replace", "run_shell_command", "read_file", "invoke_agent", "run_shell_command"],
      );
      c.eq("write_file input keys", Object.keys(before[0]?.tool_input ?? {}), ["file_path", "content"]);
      c.eq("replace input keys", Object.keys(before[1]?.tool_input ?? {}), [
        "file_path",
        "old_string",
        "new_string",
        "instruction",
      ]);
      c.eq("run_shell_command input keys", Object.keys(before[2]?.tool_input ?? {}), [
        "command",
        "description",
      ]);
      const ids = new Set(r.hooks.map((h) => h.payload?.session_id));
      c.eq("one session_id on every event, the sub-agent's calls included", ids.size, 1);
      const sub = before[5];
      c.eq(
        "the sub-agent's BeforeTool: keys like the main agent's (nothing marks it)",
        Object.keys(sub ?? {}).sort(),
        Object.keys(before[2] ?? {}).sort(),
      );
      c.ok("the sub-agent's shell ran", r.results.has("sub-shell"), [...r.results.keys()]);
      const env = r.hooks[0]?.env ?? {};
      c.eq(
        "hook env: GEMINI_PROJECT_DIR, GEMINI_CWD, CLAUDE_PROJECT_DIR, GEMINI_SESSION_ID, cwd",
        [
          env.GEMINI_PROJECT_DIR,
          env.GEMINI_CWD,
          env.CLAUDE_PROJECT_DIR,
          env.GEMINI_SESSION_ID === r.hooks[0]?.payload?.session_id,
          r.hooks[0]?.cwd,
        ],
        [ws.repo, ws.repo, ws.repo, true, ws.repo],
      );
      const main = r.hooks[0]?.payload?.session_id;
      const sessionsInOrder = r.hooks.map((h) => h.label);
      notes.push(`events in order: ${sessionsInOrder.join(", ")}`);
      notes.push(`env names: ${Object.keys(env).sort().join(", ")}`);
      const named = namedCalls(r.hooks.filter((h) => h.payload?.session_id === main)).map((n, i, all) => {
        // The sub-agent's run_shell_command is the second one: name it apart.
        const shells = all.filter((x) => x.name === n.name);
        return shells.length > 1 &&
          shells.indexOf(n) > 0 &&
          /BeforeTool-run_shell_command|AfterTool-run_shell_command/.test(n.name)
          ? { ...n, name: n.name.replace(".json", "-subagent.json") }
          : n;
      });
      const f = fixtures(c, ws, client.label, named);
      notes.push(`fixtures: ${f.names.join(", ")}`);
      if (f.unrecorded.length) notes.push(`unrecorded: ${f.unrecorded.join(", ")}`);
    },
  },
  {
    id: "mcp",
    title:
      "an MCP tool (mcpServers in .gemini/settings.json): mcp_<server>_<tool> with mcp_context, a deny honoured",
    async body({ client, ws, model, c, notes }: Ctx) {
      writeGeminiHooks(ws, ["BeforeTool"], {
        extra: { mcpServers: { demo: { command: "node", args: [MCP_SERVER], trust: true } } },
      });
      setPlan(ws, [{ match: "mcp-denied", stdout: deny("R-MCP") }]);
      const call = (id: string): Step => ({
        id,
        action: { kind: "tool", name: "mcp_demo_touch", args: { path: join(ws.repo, `${id}.txt`) } },
      });
      const r = await runGemini(client, ws, model, [call("mcp-allowed"), call("mcp-denied")], {
        prompt: "do it",
      });
      c.ok("offers the MCP tool as mcp_<server>_<tool>", r.tools.includes("mcp_demo_touch"), r.tools);
      const p = r.hooks[0]?.payload;
      c.eq(
        "BeforeTool: tool_name, tool_input keys, mcp_context server and tool",
        [
          p?.tool_name,
          Object.keys(p?.tool_input ?? {}),
          p?.mcp_context?.server_name,
          p?.mcp_context?.tool_name,
        ],
        ["mcp_demo_touch", ["path"], "demo", "touch"],
      );
      gate(c, ws, r, "mcp-allowed", "mcp-allowed.txt", "open");
      gate(c, ws, r, "mcp-denied", "mcp-denied.txt", "closed", "R-MCP");
      const f = fixtures(c, ws, client.label, namedCalls(r.hooks).slice(0, 1));
      notes.push(`fixtures: ${f.names.join(", ")}`);
    },
  },
  {
    id: "deny",
    title:
      "deny forms: decision deny / block + reason, exit 2 + stderr, Claude's hookSpecificOutput, no reason, an edit denied",
    async body({ client, ws, model, c }: Ctx) {
      writeGeminiHooks(ws, ["BeforeTool"]);
      setPlan(ws, [
        { match: "deny-json", stdout: deny("R-JSON") },
        { match: "deny-block", stdout: JSON.stringify({ decision: "block", reason: "R-BLOCK" }) },
        { match: "deny-exit2", stderr: "R-EXIT2", exit: 2 },
        {
          match: "deny-claude-shape",
          stdout: JSON.stringify({
            hookSpecificOutput: {
              hookEventName: "BeforeTool",
              permissionDecision: "deny",
              permissionDecisionReason: "R-CLAUDE",
            },
          }),
        },
        { match: "deny-noreason", stdout: JSON.stringify({ decision: "deny" }) },
        { match: "deny-write", stdout: deny("R-WRITE") },
        { match: "allow-json", stdout: JSON.stringify({ decision: "allow" }) },
      ]);
      const r = await runGemini(
        client,
        ws,
        model,
        [
          touch("deny-json"),
          touch("deny-block"),
          touch("deny-exit2"),
          touch("deny-claude-shape"),
          touch("deny-noreason"),
          write(ws, "deny-write", "deny-write.txt"),
          touch("allow-json"),
        ],
        { prompt: "do it" },
      );
      gate(c, ws, r, "deny-json", "deny-json.txt", "closed", "R-JSON");
      gate(c, ws, r, "deny-block", "deny-block.txt", "closed", "R-BLOCK");
      gate(c, ws, r, "deny-exit2", "deny-exit2.txt", "closed", "R-EXIT2");
      gate(c, ws, r, "deny-claude-shape", "deny-claude-shape.txt", GEMINI_CLAUDE_SHAPE);
      gate(c, ws, r, "deny-noreason", "deny-noreason.txt", "closed");
      gate(c, ws, r, "deny-write", "deny-write.txt", "closed", "R-WRITE");
      gate(c, ws, r, "allow-json", "allow-json.txt", "open");
      c.ok("the model saw a result for every step", r.results.size === 7, [...r.results.entries()]);
    },
  },
  {
    id: "fail",
    title:
      "failure modes, bare: exit 1, a throw, non-JSON, nothing, exit 2 without stderr, a hang past `timeout` (ms)",
    body: (x: Ctx) => failRun(x, false),
  },
  {
    id: "fail-wrapped",
    title: "the same behind `sh -c '… || { echo reason >&2; exit 2; }'`",
    body: (x: Ctx) => failRun(x, true),
  },
  {
    id: "missing",
    title: "the hook command missing: `node /nonexistent.cjs` (exit 1), a missing program (127), and wrapped",
    async body({ client, ws, model, c, notes }: Ctx) {
      for (const [id, cmd, want] of [
        ["missing-node-script", "node /nonexistent/cohent.cjs hook", "open"],
        ["missing-program", "/nonexistent/cohent hook", "closed"],
        ["missing-node-wrapped", wrapped("node /nonexistent/cohent.cjs hook"), "closed"],
      ] as const) {
        writeGeminiHooks(ws, ["BeforeTool"], { command: () => cmd });
        const r = await runGemini(client, ws, model, [touch(id)], { prompt: "do it" });
        gate(c, ws, r, id, `${id}.txt`, want);
        notes.push(`${id}: ${JSON.stringify(r.results.get(id) ?? null)}`);
      }
    },
  },
  {
    id: "trust",
    title:
      "folder trust: untrusted headless refuses to start; trustedFolders.json; --skip-trust runs with project hooks off",
    async body({ client, ws, model, c, notes }: Ctx) {
      writeGeminiHooks(ws, ["BeforeTool", "SessionStart"]);
      setPlan(ws, [{ event: "BeforeTool", stdout: deny("R-TRUST") }]);
      const none = await runGemini(client, ws, model, [touch("trust-none")], {
        prompt: "do it",
        trusted: false,
      });
      c.eq(
        "untrusted: exit 55, no request to the model, no hook",
        [none.code, none.requests.length, hookCalls(ws).length],
        [55, 0, 0],
      );
      c.ok(
        "untrusted: says so on stderr",
        /not running in a trusted directory/.test(none.stderr),
        none.stderr.slice(-300),
      );
      const skip = await runGemini(client, ws, model, [touch("trust-skip")], {
        prompt: "do it",
        trusted: false,
        args: ["--skip-trust"],
      });
      c.eq("--skip-trust: runs, no project hook runs", [skip.code, hookCalls(ws).length], [0, 0]);
      gate(c, ws, skip, "trust-skip", "trust-skip.txt", "open");
      writeFileSync(
        join(ws.home, ".gemini", "trustedFolders.json"),
        JSON.stringify({ [ws.repo]: "TRUST_FOLDER" }),
      );
      const file = await runGemini(client, ws, model, [touch("trust-file")], {
        prompt: "do it",
        trusted: false,
      });
      gate(c, ws, file, "trust-file", "trust-file.txt", "closed", "R-TRUST");
      notes.push(`untrusted stderr: ${none.stderr.split("\n").find((l) => /trusted/.test(l)) ?? ""}`);
    },
  },
];

/** Measured: Claude's hookSpecificOutput deny printed by a Gemini BeforeTool hook. */
const GEMINI_CLAUDE_SHAPE: Outcome = "open";
