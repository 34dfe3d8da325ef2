import { execFileSync } from "node:child_process";
import net from "node:net";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { init } from "../../adapter/src/installer/init.js";
import { admin } from "@cohent/backend";
import { backendForFile } from "../helpers/backend.js";
import {
  builtAdapter,
  claude,
  codex,
  intentJson,
  makeCheckout,
  run,
  shellQuote,
  type Checkout,
} from "./helpers.js";

/**
 * One guard, every dialect (issue 24): each host's native payloads, as
 * measured (test/adapter/fixtures/payloads/), through the real built hook
 * in a checkout made by `cohent init`, against a real backend on loopback.
 * Each answer is read the way that host reads it: Copilot's flat
 * permissionDecision, Gemini's decision/reason, Cursor's permission, the
 * OpenCode plugin's decision; Claude's shape where Copilot or Cursor run
 * `.claude/settings.json`.
 */

const fx = backendForFile("acme/dialects", "Every client guarded");

type Host = "copilot" | "gemini" | "cursor" | "opencode" | "copilot-via-claude" | "cursor-via-claude";

interface Dialect {
  /** The wiring's command flag. */
  flag: string;
  env: Record<string, string>;
  prompt(session: string, cwd: string, text: string): object;
  start(session: string, cwd: string): object;
  /** A write of `file` (relative) by the host's edit tool. */
  write(session: string, cwd: string, file: string): object;
  /** A read of `file` by the host's read tool. */
  read(session: string, cwd: string, file: string): object;
  shell(session: string, cwd: string, command: string): object;
  /** A tool no table of the host knows. */
  unknown(session: string, cwd: string): object;
  /** The refusal's reason as the host reads it, or null when the answer lets the call run. */
  denied(stdout: string, code: number | null): string | null;
  /** Whether an allowed call was answered the way that host runs it (an explicit allow where silence refuses). */
  allowed(stdout: string, code: number | null): boolean;
}

const parse = (s: string): any => (s.trim() ? JSON.parse(s) : null);
const patch = (file: string) => `*** Begin Patch\n*** Add File: ${file}\n+patched\n*** End Patch\n`;
const silentAllow = (stdout: string, code: number | null) => code === 0 && stdout.trim() === "";
const claudeDenied = (stdout: string, code: number | null) => {
  const o = parse(stdout)?.hookSpecificOutput;
  return code === 0 && o?.permissionDecision === "deny" ? (o.permissionDecisionReason as string) : null;
};

const copilotBase = (session: string, cwd: string) => ({ sessionId: session, timestamp: Date.now(), cwd });
/** Copilot's Claude-shaped payloads, as it sends them running `.claude/settings.json` (measured, 1.0.102). */
const copilotClaude = (session: string, cwd: string, event: string) => ({
  hook_event_name: event,
  session_id: session,
  timestamp: new Date().toISOString(),
  cwd,
});
const cursorBase = (session: string, cwd: string, event: string) => ({
  hook_event_name: event,
  conversation_id: session,
  generation_id: "gen-1",
  model: "claude-sonnet-4-5",
  cursor_version: "2.0.77",
  workspace_roots: [cwd],
});
const opencode = (event: string, input: object, output: object, cwd: string) => ({
  event,
  input,
  output,
  directory: cwd,
});

/** Cursor's documented payloads, the same through its own wiring and through Claude's entry. */
const cursorCalls: Pick<Dialect, "start" | "prompt" | "write" | "read" | "shell" | "unknown"> = {
  start: (s, cwd) => cursorBase(s, cwd, "sessionStart"),
  prompt: (s, cwd, text) => ({
    ...cursorBase(s, cwd, "beforeSubmitPrompt"),
    prompt: text,
    attachments: [],
  }),
  write: (s, cwd, file) => ({
    ...cursorBase(s, cwd, "preToolUse"),
    tool_name: "Write",
    tool_input: { file_path: path.join(cwd, file), content: "x" },
  }),
  read: (s, cwd, file) => ({
    ...cursorBase(s, cwd, "preToolUse"),
    tool_name: "Read",
    tool_input: { file_path: path.join(cwd, file) },
  }),
  shell: (s, cwd, command) => ({
    ...cursorBase(s, cwd, "preToolUse"),
    tool_name: "Shell",
    tool_input: { command },
  }),
  unknown: (s, cwd) => ({ ...cursorBase(s, cwd, "preToolUse"), tool_name: "Teleport", tool_input: {} }),
};

const DIALECTS: Record<Host, Dialect> = {
  copilot: {
    flag: "copilot",
    env: { COPILOT_CLI: "1", COPILOT_CLI_BINARY_VERSION: "1.0.102" },
    start: (s, cwd) => ({ ...copilotBase(s, cwd), source: "new", initialPrompt: "do it" }),
    prompt: (s, cwd, text) => ({ ...copilotBase(s, cwd), prompt: text }),
    write: (s, cwd, file) => ({ ...copilotBase(s, cwd), toolName: "apply_patch", toolArgs: patch(file) }),
    read: (s, cwd, file) => ({
      ...copilotBase(s, cwd),
      toolName: "view",
      toolArgs: { path: path.join(cwd, file) },
    }),
    shell: (s, cwd, command) => ({
      ...copilotBase(s, cwd),
      toolName: "bash",
      toolArgs: { command, description: "run" },
    }),
    unknown: (s, cwd) => ({ ...copilotBase(s, cwd), toolName: "teleport", toolArgs: { to: "mars" } }),
    denied: (stdout, code) => {
      const o = parse(stdout);
      return code === 0 && o?.permissionDecision === "deny" && !o.hookSpecificOutput
        ? (o.permissionDecisionReason as string)
        : null;
    },
    allowed: silentAllow,
  },
  "copilot-via-claude": {
    flag: "claude",
    env: { COPILOT_CLI: "1", COPILOT_CLI_BINARY_VERSION: "1.0.102", CLAUDE_PROJECT_DIR: "/x" },
    start: (s, cwd) => ({ ...copilotClaude(s, cwd, "SessionStart"), source: "new", initial_prompt: "do it" }),
    prompt: (s, cwd, text) => ({ ...copilotClaude(s, cwd, "UserPromptSubmit"), prompt: text }),
    // Copilot's patch tool reaches Claude's entry as Edit with the raw patch as a string (measured).
    write: (s, cwd, file) => ({
      ...copilotClaude(s, cwd, "PreToolUse"),
      tool_name: "Edit",
      tool_input: patch(file),
    }),
    read: (s, cwd, file) => ({
      ...copilotClaude(s, cwd, "PreToolUse"),
      tool_name: "Read",
      tool_input: { path: path.join(cwd, file) },
    }),
    shell: (s, cwd, command) => ({
      ...copilotClaude(s, cwd, "PreToolUse"),
      tool_name: "Bash",
      tool_input: { command, description: "run" },
    }),
    unknown: (s, cwd) => ({ ...copilotClaude(s, cwd, "PreToolUse"), tool_name: "teleport", tool_input: {} }),
    denied: claudeDenied,
    allowed: silentAllow,
  },
  gemini: {
    flag: "gemini",
    env: { GEMINI_SESSION_ID: "x", GEMINI_PROJECT_DIR: "/x", CLAUDE_PROJECT_DIR: "/x" },
    start: (s, cwd) => ({ session_id: s, cwd, hook_event_name: "SessionStart", source: "startup" }),
    prompt: (s, cwd, text) => ({ session_id: s, cwd, hook_event_name: "BeforeAgent", prompt: text }),
    write: (s, cwd, file) => ({
      session_id: s,
      cwd,
      hook_event_name: "BeforeTool",
      tool_name: "write_file",
      tool_input: { file_path: path.join(cwd, file), content: "x" },
    }),
    read: (s, cwd, file) => ({
      session_id: s,
      cwd,
      hook_event_name: "BeforeTool",
      tool_name: "read_file",
      tool_input: { file_path: path.join(cwd, file) },
    }),
    shell: (s, cwd, command) => ({
      session_id: s,
      cwd,
      hook_event_name: "BeforeTool",
      tool_name: "run_shell_command",
      tool_input: { command, description: "run" },
    }),
    unknown: (s, cwd) => ({
      session_id: s,
      cwd,
      hook_event_name: "BeforeTool",
      tool_name: "teleport",
      tool_input: {},
    }),
    denied: (stdout, code) => {
      const o = parse(stdout);
      return code === 0 && o?.decision === "deny" ? (o.reason as string) : null;
    },
    allowed: silentAllow,
  },
  cursor: {
    flag: "cursor",
    env: {},
    ...cursorCalls,
    denied: (stdout, code) => {
      const o = parse(stdout);
      return code === 0 && o?.permission === "deny" ? (o.agent_message as string) : null;
    },
    // failClosed: an empty answer would block, so an allow is printed.
    allowed: (stdout, code) => code === 0 && parse(stdout)?.permission === "allow",
  },
  "cursor-via-claude": {
    flag: "claude",
    env: {},
    ...cursorCalls,
    // Both answers in one: Cursor's documented one, and Claude's for a reader of Claude's format.
    denied: (stdout, code) => {
      const o = parse(stdout);
      return code === 0 && o?.permission === "deny" && claudeDenied(stdout, code)
        ? (o.agent_message as string)
        : null;
    },
    allowed: (stdout, code) => code === 0 && parse(stdout)?.permission !== "deny",
  },
  opencode: {
    flag: "opencode",
    env: { OPENCODE: "1" },
    start: (s, cwd) =>
      opencode(
        "session.created",
        {},
        { sessionID: s, info: { id: s, version: "1.18.33", directory: cwd } },
        cwd,
      ),
    prompt: (s, cwd, text) =>
      opencode(
        "chat.message",
        { sessionID: s },
        { message: { role: "user" }, parts: [{ type: "text", text }] },
        cwd,
      ),
    write: (s, cwd, file) =>
      opencode(
        "tool.execute.before",
        { tool: "write", sessionID: s, callID: "c1" },
        { args: { filePath: path.join(cwd, file), content: "x" } },
        cwd,
      ),
    read: (s, cwd, file) =>
      opencode(
        "tool.execute.before",
        { tool: "read", sessionID: s, callID: "c2" },
        { args: { filePath: path.join(cwd, file) } },
        cwd,
      ),
    shell: (s, cwd, command) =>
      opencode(
        "tool.execute.before",
        { tool: "bash", sessionID: s, callID: "c3" },
        { args: { command, description: "run" } },
        cwd,
      ),
    unknown: (s, cwd) =>
      opencode("tool.execute.before", { tool: "teleport", sessionID: s, callID: "c4" }, { args: {} }, cwd),
    denied: (stdout, code) => {
      const o = parse(stdout);
      return code === 0 && o?.decision === "deny" && typeof o.reason === "string" ? o.reason : null;
    },
    // The plugin runs a tool only on an explicit allow.
    allowed: (stdout, code) => code === 0 && parse(stdout)?.decision === "allow",
  },
};

interface Agent {
  co: Checkout;
  d: Dialect;
  id: string;
  env: Record<string, string>;
  repo: string;
}

/** The host the session's hook reported, and whether the Control Room counts it guarded. */
const HOST_OF: Record<Host, { host: string; wiring: string; level: string }> = {
  copilot: { host: "copilot", wiring: "fail-closed", level: "guarded" },
  // Guarded through Claude's entry (measured to fail closed), but the checkout's wiring is reported modified.
  "copilot-via-claude": { host: "copilot", wiring: "foreign", level: "advisory" },
  gemini: { host: "gemini", wiring: "fail-closed", level: "guarded" },
  cursor: { host: "cursor", wiring: "fail-closed", level: "guarded" },
  "cursor-via-claude": { host: "cursor", wiring: "foreign", level: "advisory" },
  opencode: { host: "opencode", wiring: "fail-closed", level: "guarded" },
};

async function sessionOf(a: Agent) {
  const rows = await admin.listSessions(fx.backend.deps, a.repo);
  expect(rows.length).toBe(1);
  return rows[0]!;
}

async function call(a: Agent, payload: object, extraEnv: Record<string, string> = {}) {
  const r = await run(a.co, ["hook", "--host", a.d.flag], {
    stdin: JSON.stringify(payload),
    env: { ...a.env, ...extraEnv },
  });
  return { ...r, denied: a.d.denied(r.stdout, r.code), allowed: a.d.allowed(r.stdout, r.code) };
}

/** The agent runs an adapter command through its own shell tool: the hook sees it first, then it runs. */
async function agentShell(a: Agent, args: string[]) {
  const pre = await call(a, a.d.shell(a.id, a.co.root, `node .cohent/cohent.mjs ${shellQuote(args)}`));
  expect(pre.denied, `${a.d.flag}: ${args[0]} through the shell was refused: ${pre.stdout}`).toBeNull();
  const cmd = await run(a.co, args, { env: a.env });
  expect(cmd.code, `${args[0]}: ${cmd.stdout} ${cmd.stderr}`).toBe(0);
}

let n = 0;
/** A checkout made by `cohent init`, its own repository, and a session of `host` that has not published yet. */
async function agentOf(host: Host, opts: { nativeCopilot?: boolean } = {}): Promise<Agent> {
  const repo = `acme/dialects-${n++}`;
  await fx.backend.addRepo(repo, "Every client guarded");
  const token = await fx.backend.issueToken(repo, "dora", host);
  const co = await makeCheckout(fx.backend.url, repo);
  execFileSync("git", ["init", "-q"], { cwd: co.root });
  init({ cwd: co.root, server: fx.backend.url, repo, bundle: await builtAdapter() });
  if (opts.nativeCopilot === false) rmSync(path.join(co.root, ".github/hooks/cohent.json"));
  mkdirSync(path.join(co.root, "src"), { recursive: true });
  mkdirSync(path.join(co.root, "docs"), { recursive: true });
  writeFileSync(path.join(co.root, "src/app.ts"), "x\n");
  const d = DIALECTS[host];
  return { co, d, id: `${host}-session-${n}`, env: { ...d.env, COHENT_AGENT_TOKEN: token }, repo };
}

/** Prompt, intent and scope `src`, each the way the host's agent does it. */
async function declared(a: Agent): Promise<void> {
  await call(a, a.d.start(a.id, a.co.root));
  const p = await call(a, a.d.prompt(a.id, a.co.root, "Add a feature module"));
  expect(p.code).toBe(0);
  await agentShell(a, ["intent", intentJson({ objective: "Feature module", outputs: ["feature"] })]);
  await agentShell(a, ["scope", "src"]);
}

const HOSTS = Object.keys(DIALECTS) as Host[];

describe("the two reported cases", () => {
  it("Cursor's documented Write before any intent, through Claude's entry and through its own: a deny Cursor reads", async () => {
    for (const host of ["cursor-via-claude", "cursor"] as const) {
      const a = await agentOf(host);
      const r = await call(a, a.d.write(a.id, a.co.root, "src/new.ts"));
      expect(r.denied, `${host}: ${r.stdout}`).toMatch(/^Cohent: .*intent/i);
    }
  });

  it("Copilot's patch of docs/out.md through .claude/settings.json, after intent and scope src: refused for the scope", async () => {
    const a = await agentOf("copilot-via-claude", { nativeCopilot: false });
    await declared(a);
    const inside = await call(a, a.d.write(a.id, a.co.root, "src/feature.ts"));
    expect(inside.denied, inside.stdout).toBeNull();
    const outside = await call(a, a.d.write(a.id, a.co.root, "docs/out.md"));
    expect(outside.denied, outside.stdout).toMatch(/docs\/out\.md/);
    expect(outside.denied).toMatch(/scope/i);
  });
});

describe.each(HOSTS)("%s: the guard in the host's own dialect", (host) => {
  it("before an intent: an edit is refused, a read runs; an unknown tool is refused, named", async () => {
    const a = await agentOf(host);
    await call(a, a.d.start(a.id, a.co.root));
    const edit = await call(a, a.d.write(a.id, a.co.root, "src/new.ts"));
    expect(edit.denied, edit.stdout).toMatch(/^Cohent: /);
    const read = await call(a, a.d.read(a.id, a.co.root, "src/app.ts"));
    expect(read.allowed, read.stdout).toBe(true);
    const unknown = await call(a, a.d.unknown(a.id, a.co.root));
    expect(unknown.denied, unknown.stdout).toMatch(/[Tt]eleport.* not one Cohent knows/);
  });

  it("intent and scope through the agent's shell; in scope runs, outside is refused; paused, edit and shell are refused", async () => {
    // Copilot through Claude's entry alone: the checkout without Copilot's own wiring (a person removed it).
    const a = await agentOf(host, { nativeCopilot: host !== "copilot-via-claude" });
    await declared(a);
    const inside = await call(a, a.d.write(a.id, a.co.root, "src/feature.ts"));
    expect(inside.allowed, `${inside.stdout} ${inside.stderr}`).toBe(true);
    const outside = await call(a, a.d.write(a.id, a.co.root, "docs/out.md"));
    expect(outside.denied, outside.stdout).toMatch(/docs\/out\.md/);
    // The session recorded its client and wiring, as the hook reported them.
    const session = await sessionOf(a);
    expect(session.client).toBe(
      { copilot: "Copilot CLI", gemini: "Gemini CLI", cursor: "Cursor", opencode: "OpenCode" }[
        HOST_OF[host].host
      ],
    );
    expect(
      {
        host: session.enforcement.host,
        wiring: session.enforcement.wiring,
        level: session.enforcement.level,
      },
      session.enforcement.reason,
    ).toEqual(HOST_OF[host]);
    // Paused by a person: the next edit and shell calls are refused with the reason.
    await admin.controlSession(fx.backend.deps, { sessionId: session.id, kind: "pause", actor: "carol" });
    const edit = await call(a, a.d.write(a.id, a.co.root, "src/feature.ts"));
    expect(edit.denied, edit.stdout).toMatch(/[Pp]aused by carol/);
    const shell = await call(a, a.d.shell(a.id, a.co.root, "ls"));
    expect(shell.denied, shell.stdout).toMatch(/[Pp]aused by carol/);
    await admin.controlSession(fx.backend.deps, { sessionId: session.id, kind: "resume", actor: "carol" });
    const again = await call(a, a.d.write(a.id, a.co.root, "src/feature.ts"));
    expect(again.allowed, again.stdout).toBe(true);
  });
});

describe("Copilot runs both its own wiring and Claude's", () => {
  it("with both present, the Claude entry only guards: its prompt publishes nothing, its deny still refuses", async () => {
    const a = await agentOf("copilot-via-claude");
    expect(existsSync(path.join(a.co.root, ".github/hooks/cohent.json"))).toBe(true);
    const native: Agent = { ...a, d: DIALECTS.copilot };
    await declared(native);
    // Claude's entry sees the same session's calls: no second publish (a publish opens an intent), the same guard.
    const before = (await sessionOf(a)).intents.map((i) => i.id);
    expect(before.length).toBe(1);
    const p = await call(a, a.d.prompt(a.id, a.co.root, "Add a feature module"));
    expect(p.code).toBe(0);
    expect(p.stdout.trim()).toBe("");
    expect((await sessionOf(a)).intents.map((i) => i.id)).toEqual(before);
    const outside = await call(a, a.d.write(a.id, a.co.root, "docs/out.md"));
    expect(outside.denied, outside.stdout).toMatch(/docs\/out\.md/);
    const inside = await call(a, a.d.write(a.id, a.co.root, "src/feature.ts"));
    expect(inside.denied, inside.stdout).toBeNull();
  });
});

describe("a host Cohent does not know", () => {
  it("is refused with exit 2 and a reason naming it, a tool call of any shape", async () => {
    const a = await agentOf("cursor");
    const r = await run(a.co, ["hook", "--host", "windsurf"], {
      stdin: JSON.stringify(DIALECTS.cursor.write(a.id, a.co.root, "src/x.ts")),
      env: a.env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--host "windsurf", which is not a client Cohent knows/);
    expect(r.stdout).toBe("");
  });
});

describe("sub-agents in the host's dialect", () => {
  it("Copilot 1.0.102: a sub-agent's patch is held to its parent's scope (parentAgentId)", async () => {
    const a = await agentOf("copilot");
    await declared(a);
    const sub = (file: string) => ({
      ...(DIALECTS.copilot.write(`${a.id}-sub`, a.co.root, file) as object),
      agentId: `${a.id}-sub`,
      agentType: "general-purpose",
      parentAgentId: a.id,
    });
    expect((await call(a, sub("src/sub.ts"))).allowed).toBe(true);
    const outside = await call(a, sub("docs/sub.md"));
    expect(outside.denied, outside.stdout).toMatch(/docs\/sub\.md/);
    // Its prompt is the parent's task, not a person's: nothing is published for it.
    const prompt = await call(a, {
      ...copilotBase(`${a.id}-sub`, a.co.root),
      prompt: "SUBAGENT-TASK: write",
      agentId: `${a.id}-sub`,
      parentAgentId: a.id,
    });
    expect([prompt.code, prompt.stdout]).toEqual([0, ""]);
    const intents = (await sessionOf(a)).intents;
    expect(intents.length).toBe(1);
  });

  it("OpenCode: a child session (task) is held to its parent's intent and scope; its idle does not end the parent's work", async () => {
    const a = await agentOf("opencode");
    await declared(a);
    const child = `${a.id}-child`;
    const created = await call(
      a,
      opencode("session.created", {}, { sessionID: child, info: { id: child, parentID: a.id } }, a.co.root),
    );
    expect(created.code).toBe(0);
    const childWrite = (file: string) => ({ ...(a.d.write(child, a.co.root, file) as object) });
    expect((await call(a, childWrite("src/child.ts"))).allowed).toBe(true);
    const outside = await call(a, childWrite("docs/child.md"));
    expect(outside.denied, outside.stdout).toMatch(/docs\/child\.md/);
    await call(a, opencode("session.idle", {}, { sessionID: child }, a.co.root));
    const after = await call(a, a.d.write(a.id, a.co.root, "src/after.ts"));
    expect(after.allowed, after.stdout).toBe(true);
    expect((await sessionOf(a)).intents.map((i) => i.state)).not.toContain("completed");
  });
});

describe("a backend that accepts connections but never answers", () => {
  it("every host's tool call is refused in its own dialect before the client's timeout", async () => {
    const hole = net.createServer(() => {
      /* accepts, never answers */
    });
    await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(hole.address() as net.AddressInfo).port}`;
      const co = await makeCheckout(url, "acme/hole");
      for (const host of HOSTS) {
        const d = DIALECTS[host];
        const a: Agent = {
          co,
          d,
          id: `hole-${host}`,
          env: { ...d.env, COHENT_AGENT_TOKEN: "ch_x", COHENT_HOOK_DEADLINE_MS: "1500" },
          repo: "acme/hole",
        };
        const r = await call(a, d.write(a.id, co.root, "src/x.ts"));
        expect(r.denied, `${host}: ${r.stdout} ${r.stderr}`).toMatch(/^Cohent: /);
      }
    } finally {
      hole.close();
    }
  });
});

describe("the adapter's code file (cohent-core.js) missing or from another build", () => {
  const damages = [
    ["missing", (f: string) => rmSync(f), "is missing"],
    [
      "from another build",
      (f: string) =>
        writeFileSync(f, readFileSync(f, "utf8").replace(/sha256:[0-9a-f]{8}/, "sha256:00000000")),
      "is not from the same build as the cohent.cjs beside it",
    ],
  ] as const;
  for (const [what, damage, says] of damages)
    it(`${what}: every host's edit is refused in its own dialect, naming the file and the repair; a read runs`, async () => {
      const co = await makeCheckout(fx.backend.url, "acme/dialects");
      damage(path.join(co.root, ".cohent", "cohent-core.js"));
      for (const host of HOSTS) {
        const d = DIALECTS[host];
        const a: Agent = {
          co,
          d,
          id: `core-${host}`,
          env: { ...d.env, COHENT_AGENT_TOKEN: "ch_x" },
          repo: "acme/dialects",
        };
        const edit = await call(a, d.write(a.id, co.root, "src/x.ts"));
        expect(edit.denied, `${host}: ${edit.stdout} ${edit.stderr}`).toBe(
          `Cohent: .cohent/cohent-core.js ${says}${says === "is missing" ? ": it holds the adapter's code." : "."} Repair: npx cohent init --upgrade (it rewrites the adapter's files in .cohent/).`,
        );
        const read = await call(a, d.read(a.id, co.root, "src/app.ts"));
        expect(read.allowed, `${host}: ${read.stdout}`).toBe(true);
        // An event that guards nothing goes on, the reason on stderr, as the hook answers its own failures.
        const prompt = await call(a, d.prompt(a.id, co.root, "Add a feature"));
        expect(prompt.code, host).toBe(0);
        expect(prompt.stderr).toContain(`.cohent/cohent-core.js ${says}`);
      }
      // Codex and Claude Code, through the entries init writes for them.
      const refusal = `Cohent: .cohent/cohent-core.js ${says}`;
      for (const [who, payload, env] of [
        ["codex", codex.patch("core-codex", co.root, patch("src/x.ts")), codex.env],
        ["claude", claude.write("core-claude", co.root, path.join(co.root, "src/x.ts")), claude.env],
      ] as const) {
        const r = await run(co, ["hook", "--host", who], { stdin: JSON.stringify(payload), env });
        expect(claudeDenied(r.stdout, r.code), `${who}: ${r.stdout}`).toContain(refusal);
      }
      const cli = await run(co, ["context"], { env: { COHENT_AGENT_TOKEN: "ch_x" } });
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain(`Cohent: .cohent/cohent-core.js ${says}`);
    });
});
