import { existsSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, codex, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * A shell call's own working directory (issue 49), end to end: the built
 * hook in child processes against a real backend. Ana holds src/held/; Bo
 * has an intent and no declared scope, so a `touch y.ts` judged at the
 * checkout's root is his to claim, and one judged in src/held/ is Ana's.
 * Each client names the directory its own way, as measured or documented:
 * Codex puts the tool's `workdir` into the payload's `cwd` (not followed
 * through symbolic links), Gemini's run_shell_command has `dir_path`,
 * OpenCode's bash `workdir`, Cursor's Shell input `cwd`.
 */

const REPO = "acme/workdir";
const fx = backendForFile(REPO, "Run commands where they run", ["ana", "Claude Code"], ["bo", "Codex"]);
const ANA = { session: "", env: {} as Record<string, string> };
const BO = { session: "", env: {} as Record<string, string> };

let co: Checkout;

async function startWork(who: typeof ANA, x: string, scope: string[]): Promise<void> {
  await hook(co, claude.prompt(who.session, co.root, `Work on ${x}`), who.env);
  const intent = intentJson({ objective: `Work on ${x}`, outputs: [`out-${x}`] });
  const r = await agentRuns(co, claude, who.session, ["intent", intent, "--json"], { env: who.env });
  expect(r.cmd?.code, r.pre.stdout + r.cmd?.stderr).toBe(0);
  if (scope.length) {
    const scoped = await agentRuns(co, claude, who.session, ["scope", ...scope], { env: who.env });
    expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
  }
}

/** One PreToolUse through the hook as the host's wiring runs it; the refusal's reason as that host reads it. */
async function pre(flag: string, payload: object): Promise<string | null> {
  const r = await run(co, ["hook", "--host", flag], { stdin: JSON.stringify(payload), env: BO.env });
  const o = r.stdout.trim() ? JSON.parse(r.stdout) : null;
  expect(r.code, r.stderr).toBe(0);
  if (o?.hookSpecificOutput?.permissionDecision === "deny")
    return o.hookSpecificOutput.permissionDecisionReason;
  if (o?.decision === "deny") return o.reason;
  if (o?.permission === "deny") return o.agent_message;
  return null;
}
/** What a refusal's test reads when the call was let through. */
const LET_THROUGH = "(let through)";

/** Bo's `command` run in `dir` (as the model names it), in each client's words. */
const CALLS: Record<string, (command: string, dir: string) => [string, object]> = {
  // Measured on 0.169.0 and 0.171.0: tool_input is {command} alone, the workdir is joined to the session's cwd.
  codex: (command, dir) => ["codex", { ...codex.shell(BO.session, path.resolve(co.root, dir), command) }],
  gemini: (command, dir) => [
    "gemini",
    {
      session_id: BO.session,
      cwd: co.root,
      hook_event_name: "BeforeTool",
      tool_name: "run_shell_command",
      tool_input: { command, description: "run", dir_path: dir },
    },
  ],
  opencode: (command, dir) => [
    "opencode",
    {
      event: "tool.execute.before",
      input: { tool: "bash", sessionID: BO.session, callID: "c1" },
      output: { args: { command, workdir: dir, description: "run" } },
      directory: co.root,
    },
  ],
  cursor: (command, dir) => [
    "cursor",
    {
      hook_event_name: "preToolUse",
      conversation_id: BO.session,
      generation_id: "g1",
      workspace_roots: [co.root],
      tool_name: "Shell",
      tool_input: { command, cwd: path.resolve(co.root, dir) },
    },
  ],
};

beforeEach(async () => {
  ANA.session = `ana-${Math.random().toString(36).slice(2, 8)}`;
  BO.session = `bo-${Math.random().toString(36).slice(2, 8)}`;
  ANA.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ANA.session };
  BO.env = { COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: BO.session };
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n");
  write(co.root, "src/held/x.ts", "x0\n");
  write(co.root, "docs/guide.md", "g0\n");
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");
  await startWork(ANA, "held", ["src/held/"]);
  await startWork({ ...BO, env: { ...claude.env, ...BO.env } }, "docs", []);
});

afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], {
      env: { ...claude.env, ...who.env },
    });
});

describe("a shell call is judged in the directory it runs in", () => {
  for (const [client, callOf] of Object.entries(CALLS)) {
    it(`${client}: touch y.ts in src/held is Ana's, at the root it is Bo's`, async () => {
      const held = (await pre(...callOf("touch y.ts", "src/held"))) ?? LET_THROUGH;
      expect(held).toMatch(/src\/held\/y\.ts/);
      expect(held).toMatch(/ana/);
      // An absolute directory reads the same.
      const abs = (await pre(...callOf("touch z.ts", path.join(co.root, "src/held")))) ?? LET_THROUGH;
      expect(abs).toMatch(/src\/held\/z\.ts/);
      expect(await pre(...callOf("touch y.ts", "."))).toBeNull();
      expect(existsSync(path.join(co.root, "src/held/y.ts"))).toBe(false);
    });
  }

  it("follows a directory that is a symbolic link into the peer's folder", async () => {
    symlinkSync(path.join(co.root, "src/held"), path.join(co.root, "docs/into-held"));
    for (const [client, callOf] of Object.entries(CALLS)) {
      const r = (await pre(...callOf("touch y.ts", "docs/into-held"))) ?? LET_THROUGH;
      expect(r, client).toMatch(/src\/held\/y\.ts/);
      expect(r, client).toMatch(/ana/);
    }
  });
});
