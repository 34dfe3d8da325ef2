// The stand-in-plugin probes of OpenCode: a plugin in `.opencode/plugin/`
// (standin-plugin.mjs) logs every hook and event it is given and throws from
// `tool.execute.before` when the plan says so. Each probe is one or a few
// `opencode run` runs against the Chat Completions fake.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ClientSpec } from "./clients.ts";
import { SUBAGENT_MARK, type FakeChat } from "./fake-chat.ts";
import { MCP_SERVER } from "./harness.ts";
import {
  hookCalls,
  installStandinPlugin,
  runOpencode,
  setPlan,
  type ProbeWorkspace,
} from "./probe-harness.ts";
import { Checks, fixtures, gate, outcome, type Outcome } from "./probe-kit.ts";
import type { Step } from "./script.ts";
import { writeClaudeSettings, CLAUDE_EVENTS } from "./probes-copilot.ts";

interface Ctx {
  client: ClientSpec;
  ws: ProbeWorkspace;
  model: FakeChat;
  c: Checks;
  notes: string[];
}

const sh = (id: string, command: string): Step => ({
  id,
  action: { kind: "tool", name: "bash", args: { command, description: id } },
});
const touch = (id: string) => sh(id, `echo ${id} > ${id}.txt`);
const write = (ws: ProbeWorkspace, id: string, rel: string): Step => ({
  id,
  action: { kind: "tool", name: "write", args: { filePath: join(ws.repo, rel), content: `${id}\n` } },
});

/** A provider model whose name starts with gpt-: OpenCode then offers apply_patch instead of edit and write. */
const gptModel = (model: FakeChat) => ({
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "fake",
      options: { baseURL: model.baseUrl, apiKey: "dummy" },
      models: { "gpt-5.4": { name: "gpt-5.4", tool_call: true } },
    },
  },
  model: "fake/gpt-5.4",
  small_model: "fake/gpt-5.4",
});

/** Plugins that fail to load, each in its own way. */
export const BROKEN_PLUGINS: Record<string, string> = {
  "load-throws": `throw new Error("cohent test: plugin throws at load");\nexport const P = async () => ({});\n`,
  "syntax-error": `export const P = async () => ({ "tool.execute.before": async ( => {} });\n`,
  "factory-throws": `export const P = async () => { throw new Error("cohent test: factory throws"); };\n`,
  "hook-not-a-function": `export const P = async () => ({ "tool.execute.before": "refuse" });\n`,
};

/** Measured: what a write does under each broken plugin (the guard would be that plugin). */
export const BROKEN_OUTCOME: Record<string, Outcome> = {
  "load-throws": "open",
  "syntax-error": "open",
  "factory-throws": "open",
  "hook-not-a-function": "closed",
};

export const OPENCODE_PROBES = [
  {
    id: "payloads",
    title:
      "tool.execute.before/after and every event: tool names and args, a sub-agent's session, the plugin's context",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws);
      setPlan(ws, []);
      const r = await runOpencode(
        client,
        ws,
        model,
        [
          write(ws, "create", "src/new.ts"),
          {
            id: "read",
            action: { kind: "tool", name: "read", args: { filePath: join(ws.repo, "src/app.ts") } },
          },
          {
            id: "edit",
            action: {
              kind: "tool",
              name: "edit",
              args: {
                filePath: join(ws.repo, "src/app.ts"),
                oldString: "export const app = 1;",
                newString: "export const app = 2;",
              },
            },
          },
          sh("shell", "echo hi > shell.txt"),
          {
            id: "task",
            action: {
              kind: "tool",
              name: "task",
              args: {
                description: "sub write",
                prompt: `${SUBAGENT_MARK}: write sub.txt`,
                subagent_type: "general",
              },
            },
          },
        ],
        { prompt: "do it", subSteps: [sh("sub-shell", "echo sub > sub.txt")] },
      );
      c.eq("exit code", r.code, 0);
      c.eq("tools offered (a model not named gpt-*)", [...r.tools].sort(), [
        "bash",
        "edit",
        "glob",
        "grep",
        "read",
        "skill",
        "task",
        "todowrite",
        "webfetch",
        "write",
      ]);
      const before = r.hooks.filter((h) => h.label === "tool.execute.before").map((h) => h.payload);
      c.eq(
        "tool.execute.before tools",
        before.map((p) => p.input.tool),
        ["write", "read", "edit", "bash", "task", "bash"],
      );
      c.eq("input keys", Object.keys(before[0]?.input ?? {}), ["tool", "sessionID", "callID"]);
      c.eq("write args", Object.keys(before[0]?.output?.args ?? {}), ["filePath", "content"]);
      c.eq("edit args", Object.keys(before[2]?.output?.args ?? {}), ["filePath", "oldString", "newString"]);
      c.eq("callID is the model's tool call id", before[0]?.input?.callID, "call_1_create");
      const created = r.hooks
        .filter((h) => h.label === "event:session.created")
        .map((h) => h.payload.properties.info);
      const main = created.find((i) => !i.parentID)?.id;
      const child = created.find((i) => i.parentID);
      c.ok(
        "a sub-agent runs in a child session: session.created with parentID = the main session",
        !!child && child.parentID === main,
        created.map((i) => [i.id, i.parentID ?? null]),
      );
      c.ok(
        "the sub-agent's tool.execute.before carries the child's sessionID",
        before[5]?.input?.sessionID === child?.id && before[0]?.input?.sessionID === main,
        before.map((p) => p.input.sessionID),
      );
      const init = r.hooks.find((h) => h.label === "init")?.payload;
      c.eq(
        "plugin context: directory and worktree are the checkout",
        [init?.directory, init?.worktree],
        [ws.repo, ws.repo],
      );
      const labels = [...new Set(r.hooks.map((h) => h.label))];
      c.ok(
        "fires chat.message (the prompt), session.created, session.idle",
        ["chat.message", "event:session.created", "event:session.idle"].every((l) => labels.includes(l)),
        labels,
      );
      notes.push(
        `labels: ${labels.join(", ")}`,
        `env names: ${Object.keys(r.hooks[0]?.env ?? {})
          .sort()
          .join(", ")}`,
      );
      const named = r.hooks
        .filter(
          (h) =>
            !/^event:(plugin\.added|message\.part\.(updated|delta)|catalog|reference|integration)/.test(
              h.label,
            ),
        )
        .map((h) => {
          const p = h.payload;
          const tool = p?.input?.tool ?? null;
          const sub =
            (p?.input?.sessionID ?? p?.properties?.sessionID ?? p?.properties?.info?.id) === child?.id;
          return {
            name: `${h.label.replace(":", "-")}${tool ? `-${tool}` : ""}${sub ? "-subagent" : ""}.json`,
            payload: p,
          };
        });
      const f = fixtures(c, ws, client.label, named);
      notes.push(`fixtures: ${f.names.join(", ")}`);
      if (f.unrecorded.length) notes.push(`unrecorded: ${f.unrecorded.join(", ")}`);
    },
  },
  {
    id: "apply-patch",
    title: "a gpt-* model: apply_patch instead of edit and write, its args ({patchText}), a throw refuses it",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws);
      setPlan(ws, [{ event: "tool.execute.before", match: "denied-patch", throw: true, stderr: "R-PATCH" }]);
      const p = (id: string, body: string): Step => ({
        id,
        action: {
          kind: "tool",
          name: "apply_patch",
          args: { patchText: `*** Begin Patch\n${body}*** End Patch` },
        },
      });
      const r = await runOpencode(
        client,
        ws,
        model,
        [
          p("patch-add", "*** Add File: src/patched.ts\n+export const p = 1;\n"),
          p(
            "patch-update",
            "*** Update File: src/app.ts\n@@\n-export const app = 1;\n+export const app = 3;\n",
          ),
          p("denied-patch", "*** Add File: denied-patch.txt\n+no\n"),
        ],
        { prompt: "do it", config: gptModel(model) },
      );
      c.ok(
        "apply_patch offered, edit and write not",
        r.tools.includes("apply_patch") && !r.tools.includes("edit") && !r.tools.includes("write"),
        r.tools,
      );
      const before = r.hooks.filter((h) => h.label === "tool.execute.before").map((h) => h.payload);
      c.eq(
        "tool name and args keys",
        before.map((b) => [b.input.tool, Object.keys(b.output.args)]),
        [
          ["apply_patch", ["patchText"]],
          ["apply_patch", ["patchText"]],
          ["apply_patch", ["patchText"]],
        ],
      );
      c.eq("patch-add written", outcome(ws, "src/patched.ts"), "open");
      gate(c, ws, r, "denied-patch", "denied-patch.txt", "closed", "R-PATCH");
      const f = fixtures(
        c,
        ws,
        client.label,
        before.slice(0, 1).map((b) => ({ name: "tool.execute.before-apply_patch.json", payload: b })),
      );
      notes.push(
        `fixtures: ${f.names.join(", ")}`,
        `denied-patch: ${JSON.stringify(r.results.get("denied-patch") ?? null)}`,
      );
    },
  },
  {
    id: "mcp",
    title: "an MCP tool (mcp in opencode.json): <server>_<tool> in tool.execute.before, a throw refuses it",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws);
      setPlan(ws, [{ event: "tool.execute.before", match: "mcp-denied", throw: true, stderr: "R-MCP" }]);
      const call = (id: string): Step => ({
        id,
        action: { kind: "tool", name: "demo_touch", args: { path: join(ws.repo, `${id}.txt`) } },
      });
      const r = await runOpencode(client, ws, model, [call("mcp-allowed"), call("mcp-denied")], {
        prompt: "do it",
        config: { mcp: { demo: { type: "local", command: ["node", MCP_SERVER], enabled: true } } },
      });
      c.ok("offers the MCP tool as <server>_<tool>", r.tools.includes("demo_touch"), r.tools);
      const before = r.hooks.filter((h) => h.label === "tool.execute.before").map((h) => h.payload);
      c.eq(
        "tool.execute.before: tool and args keys (nothing marks it as MCP)",
        before.map((b) => [b.input.tool, Object.keys(b.output.args)]),
        [
          ["demo_touch", ["path"]],
          ["demo_touch", ["path"]],
        ],
      );
      gate(c, ws, r, "mcp-allowed", "mcp-allowed.txt", "open");
      gate(c, ws, r, "mcp-denied", "mcp-denied.txt", "closed", "R-MCP");
      const f = fixtures(
        c,
        ws,
        client.label,
        before.slice(0, 1).map((b) => ({ name: "tool.execute.before-demo_touch.json", payload: b })),
      );
      notes.push(`fixtures: ${f.names.join(", ")}`);
    },
  },
  {
    id: "deny",
    title:
      "throwing from tool.execute.before refuses write, edit, bash and a sub-agent's bash; the model sees the message",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws);
      setPlan(ws, [
        { event: "tool.execute.before", match: "deny-write", throw: true, stderr: "R-WRITE" },
        { event: "tool.execute.before", match: "deny-edit", throw: true, stderr: "R-EDIT" },
        { event: "tool.execute.before", match: "deny-bash", throw: true, stderr: "R-BASH" },
        { event: "tool.execute.before", match: "deny-sub", throw: true, stderr: "R-SUB" },
      ]);
      const r = await runOpencode(
        client,
        ws,
        model,
        [
          write(ws, "deny-write", "deny-write.txt"),
          {
            id: "deny-edit",
            action: {
              kind: "tool",
              name: "edit",
              args: {
                filePath: join(ws.repo, "src/app.ts"),
                oldString: "export const app = 1;",
                newString: "// deny-edit",
              },
            },
          },
          touch("deny-bash"),
          {
            id: "task",
            action: {
              kind: "tool",
              name: "task",
              args: { description: "sub", prompt: `${SUBAGENT_MARK}: go`, subagent_type: "general" },
            },
          },
          touch("allowed"),
        ],
        { prompt: "do it", subSteps: [touch("deny-sub")] },
      );
      gate(c, ws, r, "deny-write", "deny-write.txt", "closed", "R-WRITE");
      c.ok(
        "deny-edit: src/app.ts unchanged, the model saw R-EDIT",
        !readFileSync(join(ws.repo, "src/app.ts"), "utf8").includes("deny-edit") &&
          (r.results.get("deny-edit") ?? "").includes("R-EDIT"),
        r.results.get("deny-edit") ?? null,
      );
      gate(c, ws, r, "deny-bash", "deny-bash.txt", "closed", "R-BASH");
      gate(c, ws, r, "deny-sub", "deny-sub.txt", "closed", "R-SUB");
      gate(c, ws, r, "allowed", "allowed.txt", "open");
      notes.push(
        ...["deny-write", "deny-edit", "deny-bash", "deny-sub"].map(
          (id) => `${id}: ${JSON.stringify(r.results.get(id) ?? null)}`,
        ),
      );
    },
  },
  {
    id: "broken-plugin",
    title:
      "a plugin that fails to load (throws at import, syntax error, factory throws, hook not a function): the write lands?",
    async body({ client, ws, model, c, notes }: Ctx) {
      for (const [id, source] of Object.entries(BROKEN_PLUGINS)) {
        installStandinPlugin(ws, "plugin", source);
        const r = await runOpencode(client, ws, model, [touch(id)], { prompt: "do it" });
        gate(c, ws, r, id, `${id}.txt`, BROKEN_OUTCOME[id]!);
        c.eq(`${id}: exit code`, r.code, 0);
        notes.push(
          `${id}: exit ${r.code}, stderr mentions the plugin: ${/plugin|standin/i.test(r.stderr)}; result ${JSON.stringify(r.results.get(id) ?? null)}`,
        );
      }
    },
  },
  {
    id: "slow-hook",
    title: "tool.execute.before that takes 12 s: no timeout, the call waits for it",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws);
      setPlan(ws, [{ event: "tool.execute.before", match: "slow", sleepMs: 12_000 }]);
      const t0 = Date.now();
      const r = await runOpencode(client, ws, model, [touch("slow")], { prompt: "do it" });
      const before = r.hooks.find((h) => h.label === "tool.execute.before");
      const after = r.hooks.find((h) => h.label === "tool.execute.after");
      const waited = after && before ? after.t - before.t : -1;
      c.ok(
        "the tool ran after the handler resolved (>= 12 s later)",
        waited >= 12_000 && outcome(ws, "slow.txt") === "open",
        waited,
      );
      notes.push(`before→after ${waited} ms, run ${Date.now() - t0} ms`);
    },
  },
  {
    id: "other-configs",
    title: "the plugin in .opencode/plugins/ (plural); .claude/settings.json hooks are not run",
    async body({ client, ws, model, c, notes }: Ctx) {
      installStandinPlugin(ws, "plugins");
      writeClaudeSettings(ws, CLAUDE_EVENTS);
      setPlan(ws, []);
      const r = await runOpencode(client, ws, model, [touch("plural")], { prompt: "do it" });
      const labels = new Set(hookCalls(ws).map((h) => h.label));
      c.eq("a plugin in .opencode/plugins/ loads", labels.has("tool.execute.before"), PLURAL_LOADS(client));
      c.eq(
        "no Claude hook runs",
        [...labels].filter((l) => l.startsWith("claude:")),
        [],
      );
      gate(c, ws, r, "plural", "plural.txt", "open");
      notes.push(`labels: ${[...labels].slice(0, 12).join(", ")}`);
    },
  },
];

/** Measured: whether `.opencode/plugins/` (plural) is read as well as `.opencode/plugin/`. */
const PLURAL_LOADS = (_c: ClientSpec) => true;
