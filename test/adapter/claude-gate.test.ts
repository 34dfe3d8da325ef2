import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLAUDE_PRE_GATE, claudeGateScript } from "../../adapter/src/installer/claude-wiring.js";
import { FAIL_CLOSED_REASON } from "../../adapter/src/installer/init.js";

/**
 * The shell-only gate beside Claude Code's mcp_tool handler
 * (claude-wiring.ts): it stands aside only for a session the MCP server
 * marked for this very Claude Code process; anything else goes to the
 * command hook. The checkouts here have no adapter, so a call handed over
 * is refused by the fail-closed wrapper (exit 2): standing aside is exit 0
 * with no output.
 */

/** What Claude Code 2.1.332 sets in its hooks' environment (measured); the model's shell gets `…_agent`. */
const HARNESS = "claude-code_2-1-332_harness";

/** Runs the gate's script as Claude Code's shell would, with this process as its parent ($PPID). */
function gate(
  project: string,
  stdin: string,
  failClosed = true,
  aiAgent: string | null = HARNESS,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", claudeGateScript(failClosed)], {
      env: {
        PATH: process.env.PATH!,
        CLAUDE_PROJECT_DIR: project,
        ...(aiAgent === null ? {} : { AI_AGENT: aiAgent }),
      },
    });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
    child.stdin.end(stdin);
  });
}

function project(marks: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-gate-"));
  mkdirSync(path.join(dir, ".cohent", "spawn-free"), { recursive: true });
  for (const m of marks) writeFileSync(path.join(dir, ".cohent", "spawn-free", m), "1\n");
  return dir;
}

const payload = (session: string) =>
  JSON.stringify({ session_id: session, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: {} });

describe("the Claude Code gate", () => {
  const SID = "3f1c9e2a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

  const rows: [name: string, marks: (pid: number) => string[], stdin: string, standsAside: boolean][] = [
    [
      "the session marked for this process: the MCP server decides",
      (pid) => [`${SID}.${pid}`],
      payload(SID),
      true,
    ],
    ["no mark: the command hook decides", () => [], payload(SID), false],
    [
      "marked for another Claude Code process (a resumed session)",
      (pid) => [`${SID}.${pid + 1}`],
      payload(SID),
      false,
    ],
    ["another session's mark", (pid) => [`other.${pid}`], payload(SID), false],
    [
      "a session id with a slash is never looked up",
      (pid) => [`x.${pid}`],
      payload("../spawn-free/x"),
      false,
    ],
    ["a session id with a space", (pid) => [`a b.${pid}`], payload("a b"), false],
    ["an empty session id", (pid) => [`.${pid}`], payload(""), false],
    ["no session id at all", (pid) => [`.${pid}`], JSON.stringify({ hook_event_name: "PreToolUse" }), false],
    [
      "spaced JSON is not read: the command hook decides",
      (pid) => [`${SID}.${pid}`],
      `{"session_id": "${SID}"}`,
      false,
    ],
    ["no payload", () => [], "", false],
  ];

  it.each(rows)("%s", async (_name, marks, stdin, standsAside) => {
    const r = await gate(project(marks(process.pid)), stdin);
    if (standsAside) expect(r).toEqual({ code: 0, out: "" });
    else expect(r).toEqual({ code: 2, out: FAIL_CLOSED_REASON + "\n" });
  });

  // A forged mark (the model's shell knows the session id and $PPID) must open nothing: the gate trusts a
  // mark only on a Claude Code that refuses the call when the mcp_tool handler fails, as its hooks' own
  // environment says. Every other environment: the command hook decides, mark or not.
  const versions: [aiAgent: string | null, standsAside: boolean][] = [
    [HARNESS, true],
    ["claude-code_2-1-400_harness", true],
    ["claude-code_2-2-0_harness", true],
    ["claude-code_3-0-0_harness", true],
    [null, false],
    ["", false],
    ["claude-code_2-1-331_harness", false],
    ["claude-code_2-1-310_harness", false],
    ["claude-code_2-1-197_harness", false],
    ["claude-code_1-9-999_harness", false],
    ["claude-code_2-1-332_agent", false],
    ["claude-code_332_harness", false],
    ["claude-code_2-1_harness", false],
    ["claude-code_2-1-3-4_harness", false],
    ["claude-code_2-1-x_harness", false],
    ["codex_2-1-332_harness", false],
  ];

  it.each(versions)("AI_AGENT=%j, the mark present: stands aside %s", async (aiAgent, standsAside) => {
    const r = await gate(project([`${SID}.${process.pid}`]), payload(SID), true, aiAgent);
    if (standsAside) expect(r).toEqual({ code: 0, out: "" });
    else expect(r).toEqual({ code: 2, out: FAIL_CLOSED_REASON + "\n" });
  });

  it("as Claude Code runs the command (/bin/sh -c <command>), its $PPID is Claude Code's pid", async () => {
    // Without the gate's exec, dash keeps its own process between them and no mark would match (FINDINGS.md).
    const dir = project([`${SID}.${process.pid}`]);
    const r = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn("/bin/sh", ["-c", CLAUDE_PRE_GATE], {
        env: { PATH: process.env.PATH!, CLAUDE_PROJECT_DIR: dir, AI_AGENT: HARNESS },
      });
      let out = "";
      child.stdout.on("data", (c) => (out += c));
      child.stderr.on("data", (c) => (out += c));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, out }));
      child.stdin.end(payload(SID));
    });
    expect(r).toEqual({ code: 0, out: "" });
  });

  it("hands the whole payload over, every line of it, to the command it runs", async () => {
    // The adapter stand-in echoes its stdin: what the gate piped is what the hook would read.
    const dir = project([]);
    writeFileSync(
      path.join(dir, ".cohent", "cohent.cjs"),
      'process.stdout.write(require("fs").readFileSync(0, "utf8"));',
    );
    const multi = `{"session_id":"${SID}",\n"tool_input":{"content":"a\\nb"}}\n`;
    expect(await gate(dir, multi, false)).toEqual({ code: 0, out: multi });
    expect(await gate(dir, payload(SID), false)).toEqual({ code: 0, out: payload(SID) + "\n" });
  });
});
