// The stand-in-hook probes of Copilot CLI: its own `.github/hooks/*.json`
// command hooks and the Claude-shaped hooks it reads from
// `.claude/settings.json`. Each probe is one `copilot -p` run; the stand-in
// answers each gated call by a marker in its command or path, so one run
// measures several answers. What they measured: MORE-CLIENTS-MEASURED.md.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ClientSpec } from "./clients.ts";
import { SUBAGENT_MARK, type FakeChat } from "./fake-chat.ts";
import { MCP_SERVER } from "./harness.ts";
import {
  hookCalls,
  runCopilot,
  setPlan,
  standinCommand,
  type ProbeWorkspace,
  type StandinRule,
} from "./probe-harness.ts";
import { Checks, fixtures, gate, namedCalls, type Outcome } from "./probe-kit.ts";
import type { Step } from "./script.ts";

/** Every event name Copilot CLI 1.0.85 and 1.0.102 accept in `.github/hooks` (unknown ones are ignored). */
export const COPILOT_EVENTS = [
  "sessionStart",
  "sessionEnd",
  "userPromptSubmitted",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "errorOccurred",
  "agentStop",
  "subagentStart",
  "subagentStop",
  "notification",
  "preCompact",
  "permissionRequest",
];

/** The Claude Code event names, as a `.claude/settings.json` would wire them. */
export const CLAUDE_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "SessionEnd",
  "PreCompact",
];

export function writeCopilotHooks(
  ws: ProbeWorkspace,
  events: string[],
  opts: { timeoutSec?: number; command?: (event: string) => string } = {},
): void {
  const hooks = Object.fromEntries(
    events.map((e) => [
      e,
      [
        {
          type: "command",
          bash: (opts.command ?? ((x) => standinCommand(ws, x)))(e),
          timeoutSec: opts.timeoutSec ?? 30,
        },
      ],
    ]),
  );
  mkdirSync(join(ws.repo, ".github", "hooks"), { recursive: true });
  writeFileSync(
    join(ws.repo, ".github", "hooks", "standin.json"),
    JSON.stringify({ version: 1, hooks }, null, 2),
  );
}

export function writeClaudeSettings(ws: ProbeWorkspace, events: string[]): void {
  const entry = (e: string) => ({ type: "command", command: standinCommand(ws, `claude:${e}`) });
  const hooks = Object.fromEntries(
    events.map((e) => [
      e,
      [/Tool|Permission/.test(e) ? { matcher: "*", hooks: [entry(e)] } : { hooks: [entry(e)] }],
    ]),
  );
  mkdirSync(join(ws.repo, ".claude"), { recursive: true });
  writeFileSync(join(ws.repo, ".claude", "settings.json"), JSON.stringify({ hooks }, null, 2));
}

const sh = (id: string, command: string): Step => ({
  id,
  action: { kind: "tool", name: "bash", args: { command, description: id } },
});
const patch = (id: string, body: string): Step => ({
  id,
  action: { kind: "custom-tool", name: "apply_patch", input: `*** Begin Patch\n${body}*** End Patch\n` },
});
const addFile = (id: string, path: string) => patch(id, `*** Add File: ${path}\n+${id}\n`);
/** A shell step that writes `<id>.txt`; the stand-in's rule for it matches that name. */
const touch = (id: string) => sh(id, `echo ${id} > ${id}.txt`);

const deny = (reason: string) =>
  JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: reason });
const claudeDeny = (reason: string) =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  });

export interface Probe {
  id: string;
  title: string;
  body(p: {
    client: ClientSpec;
    ws: ProbeWorkspace;
    model: FakeChat;
    c: Checks;
    notes: string[];
  }): Promise<void>;
}

/** A sub-agent's payload: another session id than the main agent's, or (1.0.102) an agent id outside the sub-agent events. */
const isSub = (p: any, main: string | undefined) =>
  (p?.sessionId ?? p?.session_id) !== main ||
  (!!(p?.agentId ?? p?.agent_id) &&
    !/^subagent(Start|Stop)$/i.test(String(p?.hookName ?? p?.hook_event_name ?? "")) &&
    !("agentName" in p));

/** Measured: 1.0.102 marks a sub-agent's calls (agentId, agentType, parentAgentId); 1.0.85 does not. */
const MARKS_SUBAGENTS = (client: ClientSpec) => client.version !== "1.0.85";

export const COPILOT_PROBES: Probe[] = [
  {
    id: "payloads",
    title: "every event and tool payload, the patch tool's raw string, the sub-agent's marks, the hook's env",
    async body({ client, ws, model, c, notes }) {
      writeCopilotHooks(ws, COPILOT_EVENTS);
      setPlan(ws, []);
      const r = await runCopilot(
        client,
        ws,
        model,
        [
          addFile("create", "src/new.ts"),
          patch("edit", "*** Update File: src/app.ts\n@@\n-export const app = 1;\n+export const app = 2;\n"),
          sh("shell", "echo hi > shell.txt"),
          { id: "read", action: { kind: "tool", name: "view", args: { path: join(ws.repo, "README.md") } } },
          {
            id: "task",
            action: {
              kind: "tool",
              name: "task",
              args: {
                description: "sub write",
                prompt: `${SUBAGENT_MARK}: write sub.txt`,
                agent_type: "general-purpose",
                name: "subby",
              },
            },
          },
        ],
        {
          prompt: "do it",
          subSteps: [sh("sub-shell", "echo sub > sub.txt"), addFile("sub-patch", "sub2.txt")],
        },
      );
      c.eq("exit code", r.code, 0);
      c.ok(
        "offers apply_patch as a custom tool, no create/edit tool",
        r.tools.includes("apply_patch") && !r.tools.includes("create") && !r.tools.includes("edit"),
        r.tools,
      );
      const events = [...new Set(r.hooks.map((h) => h.label))].sort();
      c.eq("events fired", events, [
        "agentStop",
        "permissionRequest",
        "postToolUse",
        "preToolUse",
        "sessionEnd",
        "sessionStart",
        "subagentStart",
        "subagentStop",
        "userPromptSubmitted",
      ]);
      const pre = r.hooks.filter((h) => h.label === "preToolUse").map((h) => h.payload);
      const patchArgs = pre.find((p) => p.toolName === "apply_patch")?.toolArgs;
      c.ok(
        "apply_patch toolArgs is the raw patch string",
        typeof patchArgs === "string" && patchArgs.startsWith("*** Begin Patch"),
        patchArgs,
      );
      c.eq("bash toolArgs keys", Object.keys(pre.find((p) => p.toolName === "bash")?.toolArgs ?? {}), [
        "command",
        "description",
      ]);
      c.eq("view toolArgs keys", Object.keys(pre.find((p) => p.toolName === "view")?.toolArgs ?? {}), [
        "path",
      ]);
      c.eq(
        "pre tool names in order",
        pre.map((p) => p.toolName),
        ["apply_patch", "apply_patch", "bash", "view", "task", "bash", "apply_patch"],
      );
      const main = r.hooks.find((h) => h.label === "sessionStart")?.payload.sessionId;
      const subCalls = pre.slice(5);
      const stop = r.hooks.find((h) => h.label === "subagentStop")?.payload;
      c.ok(
        "a sub-agent's calls carry its own sessionId, the one subagentStop names as agentId",
        subCalls.length === 2 && subCalls.every((p) => p.sessionId !== main && p.sessionId === stop?.agentId),
        subCalls.map((p) => p.sessionId),
      );
      if (MARKS_SUBAGENTS(client))
        c.eq(
          "1.0.102: sub-agent calls also carry agentId (= sessionId), agentType, parentAgentId (= the parent's sessionId)",
          subCalls.map((p) => [p.agentId === p.sessionId, p.agentType, p.parentAgentId === main]),
          [
            [true, "general-purpose", true],
            [true, "general-purpose", true],
          ],
        );
      else
        c.eq(
          "1.0.85: sub-agent calls carry no agentId or parentAgentId: nothing links them to the parent before subagentStop",
          subCalls.map((p) => [p.agentId ?? null, p.parentAgentId ?? null]),
          [
            [null, null],
            [null, null],
          ],
        );
      c.ok(
        "the main agent's own payloads share one sessionId",
        r.hooks.filter((h) => !isSub(h.payload, main)).every((h) => h.payload?.sessionId === main),
        main,
      );
      const order = r.hooks
        .map((h) => h.label)
        .filter((l) => l === "sessionStart" || l === "userPromptSubmitted")
        .slice(0, 2);
      // 1.0.85: the prompt's event first, every run. 1.0.102: sessionStart logged first in the probe
      // runs, userPromptSubmitted first in one full suite run at load 4.5 (not analysed further), so
      // only both are required there.
      if (MARKS_SUBAGENTS(client)) {
        c.eq("first events (either order)", [...order].sort(), ["sessionStart", "userPromptSubmitted"]);
        notes.push(`first events: ${order.join(", ")}`);
      } else c.eq("first events", order, ["userPromptSubmitted", "sessionStart"]);
      const env = r.hooks[0]?.env ?? {};
      c.eq(
        "hook env: COPILOT_PROJECT_DIR, CLAUDE_PROJECT_DIR, COPILOT_HOOK_DIR (1.0.102 only), COPILOT_CLI, cwd",
        [
          env.COPILOT_PROJECT_DIR,
          env.CLAUDE_PROJECT_DIR,
          env.COPILOT_HOOK_DIR ?? null,
          env.COPILOT_CLI,
          r.hooks[0]?.cwd,
        ],
        [ws.repo, ws.repo, MARKS_SUBAGENTS(client) ? join(ws.repo, ".github", "hooks") : null, "1", ws.repo],
      );
      const f = fixtures(
        c,
        ws,
        client.label,
        namedCalls(r.hooks, (p) => isSub(p, main)),
      );
      notes.push(`fixtures: ${f.names.join(", ")}`, `env names: ${Object.keys(env).sort().join(", ")}`);
      if (f.unrecorded.length) notes.push(`unrecorded: ${f.unrecorded.join(", ")}`);
    },
  },
  {
    id: "mcp",
    title: "an MCP tool (--additional-mcp-config): its name in preToolUse, a deny honoured",
    async body({ client, ws, model, c, notes }) {
      writeCopilotHooks(ws, ["preToolUse"]);
      setPlan(ws, [{ match: "mcp-denied", stdout: deny("R-MCP") }]);
      const cfg = JSON.stringify({
        mcpServers: { demo: { type: "local", command: "node", args: [MCP_SERVER], tools: ["*"] } },
      });
      const call = (id: string): Step => ({
        id,
        action: { kind: "tool", name: "demo-touch", args: { path: join(ws.repo, `${id}.txt`) } },
      });
      const r = await runCopilot(client, ws, model, [call("mcp-allowed"), call("mcp-denied")], {
        prompt: "do it",
        args: ["--additional-mcp-config", cfg],
      });
      c.ok("offers the MCP tool as <server>-<tool>", r.tools.includes("demo-touch"), r.tools);
      const pre = r.hooks.map((h) => h.payload);
      c.eq(
        "preToolUse: toolName and toolArgs keys (nothing marks it as MCP)",
        pre.map((p) => [p.toolName, Object.keys(p.toolArgs ?? {})]),
        [
          ["demo-touch", ["path"]],
          ["demo-touch", ["path"]],
        ],
      );
      gate(c, ws, r, "mcp-allowed", "mcp-allowed.txt", "open");
      gate(c, ws, r, "mcp-denied", "mcp-denied.txt", "closed", "R-MCP");
      const f = fixtures(c, ws, client.label, namedCalls(r.hooks).slice(0, 1));
      notes.push(`fixtures: ${f.names.join(", ")}`);
    },
  },
  {
    id: "deny",
    title: "deny forms: JSON on stdout, exit 2 + stderr, a deny without reason, a patch denied",
    async body({ client, ws, model, c }) {
      writeCopilotHooks(ws, ["preToolUse"]);
      setPlan(ws, [
        { match: "deny-json", stdout: deny("R-JSON") },
        { match: "deny-exit2", stderr: "R-EXIT2", exit: 2 },
        { match: "deny-noreason", stdout: JSON.stringify({ permissionDecision: "deny" }) },
        { match: "deny-patch", stdout: deny("R-PATCH") },
        { match: "deny-claude-shape", stdout: claudeDeny("R-CLAUDE-SHAPE") },
        { match: "allow-json", stdout: JSON.stringify({ permissionDecision: "allow" }) },
      ]);
      const r = await runCopilot(
        client,
        ws,
        model,
        [
          touch("deny-json"),
          touch("deny-exit2"),
          touch("deny-noreason"),
          addFile("deny-patch", "deny-patch.txt"),
          touch("deny-claude-shape"),
          touch("allow-json"),
        ],
        { prompt: "do it" },
      );
      gate(c, ws, r, "deny-json", "deny-json.txt", "closed", "R-JSON");
      // Measured: exit 2 refuses, but the model is told only "hook exited with code 2", not the stderr.
      gate(c, ws, r, "deny-exit2", "deny-exit2.txt", "closed", "hook exited with code 2");
      c.ok(
        "exit 2: the stderr reason does not reach the model",
        !(r.results.get("deny-exit2") ?? "").includes("R-EXIT2"),
        r.results.get("deny-exit2") ?? null,
      );
      gate(c, ws, r, "deny-noreason", "deny-noreason.txt", "closed");
      gate(c, ws, r, "deny-patch", "deny-patch.txt", "closed", "R-PATCH");
      // Measured: Claude's hookSpecificOutput form printed by a native hook is ignored: the call runs.
      gate(c, ws, r, "deny-claude-shape", "deny-claude-shape.txt", "open");
      gate(c, ws, r, "allow-json", "allow-json.txt", "open");
    },
  },
  {
    id: "fail",
    title:
      "failure modes: exit 1, a throw, non-JSON, nothing, exit 2 without stderr, two JSON objects, a hang past timeoutSec",
    async body({ client, ws, model, c, notes }) {
      // 6 s: long enough for a loaded machine to start node, short enough to keep the probe quick.
      writeCopilotHooks(ws, ["preToolUse"], { timeoutSec: 6 });
      setPlan(ws, [
        { match: "fail-exit1", stderr: "boom", exit: 1 },
        { match: "fail-throw", throw: true },
        { match: "fail-nonjson", stdout: "this is not json" },
        { match: "fail-exit2-empty", exit: 2 },
        { match: "fail-two-json", stdout: deny("R-TWO") + deny("R-TWO") },
        { match: "fail-hang", sleepMs: 15_000, stdout: deny("R-LATE") },
      ]);
      const t0 = Date.now();
      const r = await runCopilot(
        client,
        ws,
        model,
        [
          touch("fail-exit1"),
          touch("fail-throw"),
          touch("fail-nonjson"),
          touch("fail-empty"),
          touch("fail-exit2-empty"),
          touch("fail-two-json"),
          touch("fail-hang"),
        ],
        { prompt: "do it" },
      );
      notes.push(`run ${Date.now() - t0} ms`);
      for (const [id, want] of Object.entries(COPILOT_FAIL)) gate(c, ws, r, id, `${id}.txt`, want);
      notes.push(
        ...Object.keys(COPILOT_FAIL).map((id) => `${id}: ${JSON.stringify(r.results.get(id) ?? null)}`),
      );
    },
  },
  {
    id: "missing",
    title:
      "the hook command missing: `node /nonexistent.cjs` (exit 1) and a program that does not exist (127)",
    async body({ client, ws, model, c, notes }) {
      for (const [id, cmd] of [
        ["missing-node-script", "node /nonexistent/cohent.cjs hook"],
        ["missing-program", "/nonexistent/cohent hook"],
      ] as const) {
        writeCopilotHooks(ws, ["preToolUse"], { command: () => cmd });
        const r = await runCopilot(client, ws, model, [touch(id)], { prompt: "do it" });
        gate(c, ws, r, id, `${id}.txt`, "closed");
        notes.push(`${id}: ${JSON.stringify(r.results.get(id) ?? null)}`);
      }
    },
  },
  {
    id: "trust",
    title:
      "folder trust: none (hooks off, silently), saved in ~/.copilot/config.json trustedFolders, --trust-folder",
    async body({ client, ws, model, c, notes }) {
      writeCopilotHooks(ws, ["preToolUse"]);
      setPlan(ws, [{ stdout: deny("R-TRUST") }]);
      const none = await runCopilot(client, ws, model, [touch("trust-none")], {
        prompt: "do it",
        trust: "none",
      });
      c.eq("untrusted: no hook runs", hookCalls(ws).length, 0);
      gate(c, ws, none, "trust-none", "trust-none.txt", "open");
      const saved = await runCopilot(client, ws, model, [touch("trust-saved")], {
        prompt: "do it",
        trust: "saved",
      });
      gate(c, ws, saved, "trust-saved", "trust-saved.txt", "closed", "R-TRUST");
      writeFileSync(join(ws.home, ".copilot", "config.json"), "{}");
      const flag = await runCopilot(client, ws, model, [touch("trust-flag")], {
        prompt: "do it",
        trust: "flag",
      });
      const hasFlag = client.version !== "1.0.85";
      c.eq("--trust-folder accepted", flag.code === 0, hasFlag);
      gate(c, ws, flag, "trust-flag", "trust-flag.txt", "closed", hasFlag ? "R-TRUST" : undefined);
      notes.push(`--trust-folder: exit ${flag.code} ${flag.stderr.split("\n")[0]}`);
    },
  },
  {
    id: "claude-settings",
    title:
      "only .claude/settings.json: Claude's event names and shape, patch as Edit with a string, a Claude deny, exit 1",
    async body({ client, ws, model, c, notes }) {
      writeClaudeSettings(ws, CLAUDE_EVENTS);
      setPlan(ws, [
        { event: "claude:PreToolUse", match: "deny-claude-patch", stdout: claudeDeny("R-CLAUDE-PATCH") },
        { event: "claude:PreToolUse", match: "deny-claude-exit2", stderr: "R-CLAUDE-EXIT2", exit: 2 },
        { event: "claude:PreToolUse", match: "deny-claude\\.txt", stdout: claudeDeny("R-CLAUDE") },
        { event: "claude:PreToolUse", match: "fail-claude-exit1", stderr: "boom", exit: 1 },
        { event: "claude:PreToolUse", match: "deny-copilot-shape", stdout: deny("R-COPILOT-SHAPE") },
      ]);
      const r = await runCopilot(
        client,
        ws,
        model,
        [
          addFile("create", "src/new.ts"),
          sh("shell", "echo hi > shell.txt"),
          { id: "read", action: { kind: "tool", name: "view", args: { path: join(ws.repo, "README.md") } } },
          {
            id: "task",
            action: {
              kind: "tool",
              name: "task",
              args: {
                description: "sub",
                prompt: `${SUBAGENT_MARK}: write`,
                agent_type: "general-purpose",
                name: "subby",
              },
            },
          },
          touch("deny-claude"),
          addFile("deny-claude-patch", "deny-claude-patch.txt"),
          touch("deny-claude-exit2"),
          touch("fail-claude-exit1"),
          touch("deny-copilot-shape"),
        ],
        { prompt: "do it", subSteps: [sh("sub-shell", "echo sub > sub.txt")] },
      );
      const pre = r.hooks.filter((h) => h.label === "claude:PreToolUse").map((h) => h.payload);
      c.eq(
        "PreToolUse tool names",
        pre.slice(0, 5).map((p) => p.tool_name),
        ["Edit", "Bash", "Read", "Agent", "Bash"],
      );
      c.ok(
        "the patch arrives as Edit with tool_input the raw patch string",
        typeof pre[0]?.tool_input === "string" && pre[0].tool_input.startsWith("*** Begin Patch"),
        pre[0]?.tool_input,
      );
      c.ok(
        "no transcript_path on PreToolUse",
        pre.every((p) => !("transcript_path" in p)),
        Object.keys(pre[0] ?? {}),
      );
      const main = r.hooks.find((h) => h.label === "claude:SessionStart")?.payload.session_id;
      const sub = pre.find((p) => p.session_id !== main);
      c.ok(
        "a sub-agent's PreToolUse has its own session_id",
        !!sub,
        pre.map((p) => p.session_id),
      );
      c.eq(
        "sub-agent marks (1.0.102: agent_id = session_id, agent_type, parent_agent_id = the parent's; 1.0.85: none)",
        [sub?.agent_id === sub?.session_id, sub?.agent_type ?? null, sub?.parent_agent_id === main],
        MARKS_SUBAGENTS(client) ? [true, "general-purpose", true] : [false, null, false],
      );
      gate(c, ws, r, "deny-claude", "deny-claude.txt", "closed", "R-CLAUDE");
      gate(c, ws, r, "deny-claude-patch", "deny-claude-patch.txt", "closed", "R-CLAUDE-PATCH");
      gate(c, ws, r, "deny-claude-exit2", "deny-claude-exit2.txt", "closed", "hook exited with code 2");
      gate(c, ws, r, "fail-claude-exit1", "fail-claude-exit1.txt", "closed");
      gate(c, ws, r, "deny-copilot-shape", "deny-copilot-shape.txt", "closed", "R-COPILOT-SHAPE");
      const events = [...new Set(r.hooks.map((h) => h.label))].sort();
      notes.push(`events fired: ${events.join(", ")}`);
      const f = fixtures(
        c,
        ws,
        `${client.label}/claude-settings`,
        namedCalls(r.hooks, (p) => isSub(p, main)),
      );
      notes.push(`fixtures: ${f.names.join(", ")}`);
      if (f.unrecorded.length) notes.push(`unrecorded: ${f.unrecorded.join(", ")}`);
    },
  },
  {
    id: "both-configs",
    title: ".github/hooks and .claude/settings.json both present: which runs, and a deny from either",
    async body({ client, ws, model, c, notes }) {
      writeCopilotHooks(ws, ["preToolUse", "sessionStart"]);
      writeClaudeSettings(ws, ["PreToolUse", "SessionStart"]);
      setPlan(ws, [
        { event: "preToolUse", match: "deny-native", stdout: deny("R-NATIVE") },
        { event: "claude:PreToolUse", match: "deny-claude-only", stdout: claudeDeny("R-CLAUDE-ONLY") },
      ]);
      const r = await runCopilot(
        client,
        ws,
        model,
        [touch("both-allow"), touch("deny-native"), touch("deny-claude-only")],
        {
          prompt: "do it",
        },
      );
      const count = (label: string) => r.hooks.filter((h) => h.label === label).length;
      // Measured: both run for every call, the native one first; a native deny ends it (Claude's is not asked).
      c.eq(
        "preToolUse and Claude PreToolUse calls for 3 tool calls, one denied natively",
        [count("preToolUse"), count("claude:PreToolUse")],
        [3, 2],
      );
      c.eq(
        "order",
        r.hooks.filter((h) => /PreToolUse|preToolUse/.test(h.label)).map((h) => h.label),
        ["preToolUse", "claude:PreToolUse", "preToolUse", "preToolUse", "claude:PreToolUse"],
      );
      gate(c, ws, r, "both-allow", "both-allow.txt", "open");
      gate(c, ws, r, "deny-native", "deny-native.txt", "closed", "R-NATIVE");
      gate(c, ws, r, "deny-claude-only", "deny-claude-only.txt", "closed", "R-CLAUDE-ONLY");
      notes.push(`labels: ${r.hooks.map((h) => h.label).join(", ")}`);
    },
  },
];

/** Measured: what each failure of a `.github/hooks` preToolUse command does to the call. */
export const COPILOT_FAIL: Record<string, Outcome> = {
  "fail-exit1": "closed",
  "fail-throw": "closed",
  "fail-nonjson": "open",
  "fail-empty": "open",
  "fail-exit2-empty": "closed",
  "fail-two-json": "open",
  "fail-hang": "open",
};

export type { StandinRule };
