import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staleWrites } from "../../adapter/src/guard/stale-write.js";
import { backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, codex, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * A stale write refused across agents and clients (issue 50, item 3), end
 * to end: the built hook in child processes against a real backend. Ana
 * reads src/x.ts with her client's read tool; Bo (Claude Code), who holds
 * it, changes it with his Write tool and completes; Ana then writes the
 * file, as her client's edit tool, patch tool or a shell command would: the
 * write is refused, naming Bo and the lines he changed, in Ana's client's
 * own dialect. Ana reading it again lets her write.
 *
 * The recording (each client's read PostToolUse, Bo's edit PostToolUse) is
 * checked directly too (staleWrites on the checkout); the refusal itself is
 * the `stale-write` rule of the guard's decision (rules.ts).
 */

const REPO = "acme/stale-write";
const fx = backendForFile(REPO, "Stale writes", ["ana", "Gemini CLI"], ["bo", "Claude Code"]);
const ANA = { session: "", env: {} as Record<string, string> };
const BO = { session: "", env: {} as Record<string, string> };
const FILE = "src/x.ts";
const TEXT = Array.from({ length: 12 }, (_, i) => `export const v${i} = ${i};\n`).join("");
const BOS = TEXT.replace("v4 = 4", 'v4 = "bo"');

let co: Checkout;
const abs = (f = FILE) => path.join(co.root, f);

async function startWork(who: typeof ANA, x: string, scope: string[]): Promise<void> {
  const env = { ...claude.env, ...who.env };
  await hook(co, claude.prompt(who.session, co.root, `Work on ${x}`), env);
  const intent = intentJson({ objective: `Work on ${x}`, outputs: [`out-${x}`] });
  const r = await agentRuns(co, claude, who.session, ["intent", intent, "--json"], { env });
  expect(r.cmd?.code, r.pre.stdout + r.cmd?.stderr).toBe(0);
  if (scope.length) {
    const scoped = await agentRuns(co, claude, who.session, ["scope", ...scope], { env });
    expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
  }
}

/** One hook call through `--host flag`; the refusal's reason as that host reads it, or null. */
async function call(flag: string, payload: object, env: Record<string, string>): Promise<string | null> {
  const r = await run(co, ["hook", "--host", flag], { stdin: JSON.stringify(payload), env });
  expect(r.code, r.stderr).toBe(0);
  const o = r.stdout.trim() ? JSON.parse(r.stdout) : null;
  if (o?.hookSpecificOutput?.permissionDecision === "deny")
    return o.hookSpecificOutput.permissionDecisionReason;
  if (o?.permissionDecision === "deny") return o.permissionDecisionReason;
  if (o?.decision === "deny") return o.reason;
  if (o?.permission === "deny") return o.agent_message;
  return null;
}

const patchOf = (file: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-export const v0 = 0;\n+export const v0 = "ana";\n*** End Patch\n`;

/** Ana's client: its flag and env, its read (Pre and Post), and its write forms. */
interface Client {
  flag: string;
  env: Record<string, string>;
  read(event: "Pre" | "Post"): object;
  writes: Record<string, () => object>;
}

const gemini = (event: "Pre" | "Post", tool: string, input: object) => ({
  session_id: ANA.session,
  cwd: co.root,
  hook_event_name: event === "Pre" ? "BeforeTool" : "AfterTool",
  tool_name: tool,
  tool_input: input,
  ...(event === "Post" ? { tool_response: { llmContent: "ok" } } : {}),
});
const opencode = (event: "Pre" | "Post", tool: string, args: object) =>
  event === "Pre"
    ? {
        event: "tool.execute.before",
        input: { tool, sessionID: ANA.session, callID: "c1" },
        output: { args },
        directory: co.root,
      }
    : {
        event: "tool.execute.after",
        input: { tool, sessionID: ANA.session, callID: "c1", args },
        output: { title: "", output: "ok", metadata: {} },
        directory: co.root,
      };
const copilot = (event: "Pre" | "Post", tool: string, args: unknown) => ({
  sessionId: ANA.session,
  timestamp: Date.now(),
  cwd: co.root,
  toolName: tool,
  toolArgs: args,
  ...(event === "Post" ? { toolResult: { resultType: "success", textResultForLlm: "ok" } } : {}),
});
const cursor = (event: "Pre" | "Post", tool: string, input: object) => ({
  hook_event_name: event === "Pre" ? "preToolUse" : "postToolUse",
  conversation_id: ANA.session,
  generation_id: "g1",
  cursor_version: "2.0.77",
  workspace_roots: [co.root],
  tool_name: tool,
  tool_input: input,
});

const CLIENTS: Record<string, Client> = {
  "Gemini CLI": {
    flag: "gemini",
    env: { GEMINI_SESSION_ID: "x", GEMINI_PROJECT_DIR: "/x" },
    read: (e) => gemini(e, "read_file", { file_path: abs() }),
    writes: {
      "write_file (edit tool)": () => gemini("Pre", "write_file", { file_path: abs(), content: "ana\n" }),
      "run_shell_command `cat > src/x.ts`": () =>
        gemini("Pre", "run_shell_command", { command: `printf 'ana\\n' > ${FILE}`, dir_path: "." }),
    },
  },
  OpenCode: {
    flag: "opencode",
    env: { OPENCODE: "1" },
    read: (e) => opencode(e, "read", { filePath: abs() }),
    writes: {
      "edit (edit tool)": () => opencode("Pre", "edit", { filePath: abs(), oldString: "a", newString: "b" }),
      "apply_patch (patch)": () => opencode("Pre", "apply_patch", { patchText: patchOf(FILE) }),
      "bash `cat > src/x.ts`": () => opencode("Pre", "bash", { command: `cat > ${FILE} <<'EOF'\nana\nEOF` }),
    },
  },
  "Copilot CLI": {
    flag: "copilot",
    env: { COPILOT_CLI: "1", COPILOT_CLI_BINARY_VERSION: "1.0.102" },
    read: (e) => copilot(e, "view", { path: abs() }),
    writes: {
      "apply_patch (patch)": () => copilot("Pre", "apply_patch", patchOf(FILE)),
      "bash `tee src/x.ts`": () => copilot("Pre", "bash", { command: `echo ana | tee ${FILE}` }),
    },
  },
  Cursor: {
    flag: "cursor",
    env: {},
    read: (e) => cursor(e, "Read", { file_path: abs() }),
    writes: {
      "Write (edit tool)": () => cursor("Pre", "Write", { file_path: abs(), content: "ana\n" }),
      "Shell `cp`": () => cursor("Pre", "Shell", { command: `cp /dev/null ${FILE}` }),
    },
  },
};

/** Bo's guarded Write of src/x.ts, with its PostToolUse (Claude Code). */
async function bosEdit(text: string): Promise<void> {
  const payload = (event: string) => ({
    ...claude.write(BO.session, co.root, abs(), event),
    tool_use_id: "toolu_b",
  });
  expect((await hook(co, payload("PreToolUse"), BO.env)).denied).toBeNull();
  writeFileSync(abs(), text);
  await hook(co, payload("PostToolUse"), BO.env);
}

beforeEach(async () => {
  ANA.session = `ana-${Math.random().toString(36).slice(2, 8)}`;
  BO.session = `bo-${Math.random().toString(36).slice(2, 8)}`;
  ANA.env = { COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ANA.session };
  BO.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: BO.session };
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n");
  write(co.root, FILE, TEXT);
  write(co.root, "docs/guide.md", "g0\n");
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");
  await startWork(BO, "x", [FILE]);
  await startWork(ANA, "docs", []);
});

afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], {
      env: { ...claude.env, ...who.env },
    });
});

describe("a stale write is refused across agents and clients, naming the peer", () => {
  for (const [name, c] of Object.entries(CLIENTS)) {
    it(`${name} reads, Bo (Claude Code) edits and completes, ${name}'s writes are refused; read again, one runs`, async () => {
      const env = { ...c.env, ...ANA.env };
      expect(await call(c.flag, c.read("Pre"), env)).toBeNull();
      await call(c.flag, c.read("Post"), env);
      await bosEdit(BOS);
      const done = await agentRuns(co, claude, BO.session, ["checkpoint", "completed", "x done"], {
        env: BO.env,
      });
      expect(done.cmd?.code, done.cmd?.stderr).toBe(0);

      // The recording, through the real hook processes: Ana's read, Bo's write by its bytes.
      const [stale] = staleWrites(co.root, ANA.session, [FILE]);
      expect(stale).toMatchObject({
        path: FILE,
        by: { sessionId: BO.session, client: "Claude Code" },
        lines: [[5, 5]],
      });

      for (const [form, payload] of Object.entries(c.writes)) {
        const reason = await call(c.flag, payload(), env);
        expect(reason, `${name} ${form}`).toContain(BO.session);
        expect(reason, `${name} ${form}`).toContain("line 5 of src/x.ts");
        expect(reason, `${name} ${form}`).toContain("Read src/x.ts again");
        expect(readFileSync(abs(), "utf8")).toBe(BOS);
      }

      // Read again: the first write form is let through.
      await call(c.flag, c.read("Post"), env);
      expect(staleWrites(co.root, ANA.session, [FILE])).toEqual([]);
      const [first] = Object.values(c.writes);
      expect(await call(c.flag, first!(), env)).toBeNull();
    });
  }

  it("Claude Code reads, Bo patches through Codex's apply_patch: Claude Code's Write and Bash are refused", async () => {
    const env = { ...claude.env, ...ANA.env };
    const read = (event: string) => ({
      ...claude.bash(ANA.session, co.root, "x", event),
      tool_name: "Read",
      tool_input: { file_path: abs() },
    });
    await hook(co, read("PostToolUse"), env);
    const patch = `*** Begin Patch\n*** Update File: ${FILE}\n@@\n-export const v4 = 4;\n+export const v4 = "bo";\n*** End Patch\n`;
    expect((await hook(co, codex.patch(BO.session, co.root, patch), BO.env)).denied).toBeNull();
    writeFileSync(abs(), BOS);
    await hook(co, codex.patch(BO.session, co.root, patch, "PostToolUse"), BO.env);
    await agentRuns(co, claude, BO.session, ["checkpoint", "completed", "x done"], { env: BO.env });
    const forms = {
      Write: claude.write(ANA.session, co.root, abs()),
      "Bash `cat >`": claude.bash(ANA.session, co.root, `cat > ${FILE} <<'EOF'\nana\nEOF`),
    };
    for (const [form, payload] of Object.entries(forms)) {
      const r = await hook(co, payload, env);
      expect(r.denied, form).toContain(BO.session);
      expect(r.denied, form).toContain("line 5 of src/x.ts");
    }
  });

  /**
   * Shell reads and shell writes, through the shell watch (read-shell.ts):
   * passes once held/call.ts calls recordShellSnapshot before a watched call
   * and recordShellWrites with the changes its watch found after it (the
   * lead's wiring). Until then a Codex `cat` is no recorded read.
   */
  it("Codex reads with `cat`, Bo rewrites it with `sed -i`: Codex's `cat >` is refused, naming Bo's shell", async () => {
    const shell = (who: typeof ANA, command: string, event: string, id: string) =>
      who === ANA
        ? { ...codex.shell(ANA.session, co.root, command, event), tool_use_id: id }
        : { ...claude.bash(BO.session, co.root, command, event), tool_use_id: id };
    const read = `cat ${FILE}`;
    expect((await hook(co, shell(ANA, read, "PreToolUse", "call_r"), ANA.env)).denied).toBeNull();
    await hook(co, shell(ANA, read, "PostToolUse", "call_r"), ANA.env);
    const sed = `sed -i 's/v4 = 4/v4 = "bo"/' ${FILE}`;
    expect((await hook(co, shell(BO, sed, "PreToolUse", "toolu_s"), BO.env)).denied).toBeNull();
    writeFileSync(abs(), BOS);
    await hook(co, shell(BO, sed, "PostToolUse", "toolu_s"), BO.env);
    await agentRuns(co, claude, BO.session, ["checkpoint", "completed", "x done"], { env: BO.env });
    const r = await hook(co, shell(ANA, `cat > ${FILE} <<'EOF'\nana\nEOF`, "PreToolUse", "call_w"), ANA.env);
    expect(r.denied).toContain(BO.session);
    expect(r.denied).toContain("line 5 of src/x.ts through a shell command");
  });

  it("a touch of the file, or a rewrite of the same bytes, refuses nothing", async () => {
    const c = CLIENTS["Gemini CLI"]!;
    const env = { ...c.env, ...ANA.env };
    await call(c.flag, c.read("Post"), env);
    await bosEdit(TEXT); // Bo's edit tool wrote the very bytes Ana read (a formatter that changed nothing)
    sh(co.root, "-c", "core.fileMode=false", "status"); // Git refreshes its index stat
    writeFileSync(abs(), readFileSync(abs()));
    await agentRuns(co, claude, BO.session, ["checkpoint", "completed", "x done"], { env: BO.env });
    expect(staleWrites(co.root, ANA.session, [FILE])).toEqual([]);
    expect(await call(c.flag, c.writes["write_file (edit tool)"]!(), env)).toBeNull();
  });
});
