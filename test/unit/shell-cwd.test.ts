import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkoutCwd } from "../../adapter/src/guard/checkout-cwd.js";
import { classify } from "../../adapter/src/guard/tools.js";
import { detect } from "../../adapter/src/hosts/detect.js";

/**
 * Where a call runs (issue 49), as a table: each host's payload read by
 * its dialect gives the directory the guard judges the call's paths in.
 * Codex's recorded payloads carry the exec_command `workdir` in `cwd`
 * already; Gemini's run_shell_command names `dir_path`, OpenCode's bash
 * `workdir`, Cursor's Shell `cwd`; Copilot's bash and Claude Code's Bash
 * name none. Then the directory's real path, named in the checkout.
 */

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "../adapter/fixtures/payloads");
const fixture = (dir: string, file: string) =>
  JSON.parse(readFileSync(path.join(FIXTURES, dir, `${file}.json`), "utf8")) as Record<string, unknown>;

const gemini = (input: Record<string, unknown>, cwd: string | null = "/repo", event = "BeforeTool") => ({
  session_id: "g1",
  ...(cwd ? { cwd } : {}),
  hook_event_name: event,
  tool_name: "run_shell_command",
  tool_input: { command: "touch y.ts", description: "run", ...input },
});
const opencode = (args: Record<string, unknown>, event = "tool.execute.before") => ({
  event,
  input: {
    tool: "bash",
    sessionID: "o1",
    callID: "c1",
    ...(event.endsWith("after") ? { args: { command: "touch y.ts", ...args } } : {}),
  },
  output: event.endsWith("after") ? { output: "" } : { args: { command: "touch y.ts", ...args } },
  directory: "/repo",
});
const cursor = (input: Record<string, unknown>, tool: string | null = "Shell") => ({
  hook_event_name: "preToolUse",
  conversation_id: "c1",
  generation_id: "g1",
  workspace_roots: ["/repo"],
  ...(tool ? { tool_name: tool } : {}),
  tool_input: { command: "touch y.ts", ...input },
});

const CASES: [string, string, Record<string, unknown>, string | undefined][] = [
  // Measured: Codex resolves the workdir itself, into cwd; a link is not followed.
  ["codex 0.169.0, no workdir", "codex", fixture("codex@0.169.0", "PreToolUse-Bash"), "/repo"],
  [
    "codex 0.169.0, workdir src/held",
    "codex",
    fixture("codex@0.169.0", "PreToolUse-Bash-workdir"),
    "/repo/src/held",
  ],
  [
    "codex 0.171.0, workdir src/held",
    "codex",
    fixture("codex@0.171.0", "PreToolUse-Bash-workdir"),
    "/repo/src/held",
  ],
  [
    "codex 0.171.0, after the call",
    "codex",
    fixture("codex@0.171.0", "PostToolUse-Bash-workdir"),
    "/repo/src/held",
  ],
  [
    "codex 0.171.0, absolute workdir",
    "codex",
    fixture("codex@0.171.0", "PreToolUse-Bash-workdir-absolute"),
    "/repo/src/held",
  ],
  [
    "codex 0.171.0, linked workdir",
    "codex",
    fixture("codex@0.171.0", "PreToolUse-Bash-workdir-link"),
    "/repo/link",
  ],
  [
    "gemini, recorded (no dir_path)",
    "gemini",
    fixture("gemini@0.61.0", "BeforeTool-run_shell_command"),
    "/repo",
  ],
  ["gemini, dir_path", "gemini", gemini({ dir_path: "src/held" }), "/repo/src/held"],
  ["gemini, dir_path absolute", "gemini", gemini({ dir_path: "/repo/src/held/" }), "/repo/src/held"],
  ["gemini, dir_path with ..", "gemini", gemini({ dir_path: "docs/../src/held" }), "/repo/src/held"],
  ["gemini, dir_path empty", "gemini", gemini({ dir_path: "" }), "/repo"],
  ["gemini, an older release's directory", "gemini", gemini({ directory: "src/held" }), "/repo/src/held"],
  [
    "gemini, after the call",
    "gemini",
    gemini({ dir_path: "src/held" }, "/repo", "AfterTool"),
    "/repo/src/held",
  ],
  ["gemini, no cwd to resolve against", "gemini", gemini({ dir_path: "src/held" }, null), undefined],
  [
    "gemini, no cwd, absolute dir_path",
    "gemini",
    gemini({ dir_path: "/repo/src/held" }, null),
    "/repo/src/held",
  ],
  ["opencode, no workdir", "opencode", opencode({}), "/repo"],
  ["opencode, workdir", "opencode", opencode({ workdir: "src/held" }), "/repo/src/held"],
  ["opencode, workdir absolute", "opencode", opencode({ workdir: "/elsewhere" }), "/elsewhere"],
  [
    "opencode, after the call",
    "opencode",
    opencode({ workdir: "src/held" }, "tool.execute.after"),
    "/repo/src/held",
  ],
  [
    "cursor, recorded Shell (cwd the root)",
    "cursor",
    fixture("cursor@documented", "preToolUse-Shell"),
    "/repo",
  ],
  ["cursor, Shell cwd", "cursor", cursor({ cwd: "/repo/src/held" }), "/repo/src/held"],
  ["cursor, Shell cwd relative", "cursor", cursor({ cwd: "src/held" }), "/repo/src/held"],
  ["cursor, no tool_name, a command", "cursor", cursor({ cwd: "/repo/src/held" }, null), "/repo/src/held"],
  [
    "cursor, beforeShellExecution",
    "cursor",
    { ...fixture("cursor@documented", "beforeShellExecution"), cwd: "/repo/src/held" },
    "/repo/src/held",
  ],
  // No directory of their own: a stray key changes nothing.
  [
    "copilot, bash",
    "copilot",
    {
      ...fixture("copilot@1.0.102", "preToolUse-bash"),
      toolArgs: { command: "touch y.ts", cwd: "src/held" },
    },
    "/repo",
  ],
  [
    "claude, Bash",
    "claude",
    {
      session_id: "c1",
      cwd: "/repo",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "touch y.ts", workdir: "src/held" },
    },
    "/repo",
  ],
];

describe("the directory a shell call runs in, per dialect", () => {
  it.each(CASES)("%s", (_, flag, raw, want) => {
    const env = flag === "copilot" ? { COPILOT_CLI: "1" } : {};
    const r = detect(flag, raw, env)!.dialect.read(raw, env)!;
    expect(classify(r.p.tool_name!, r.p.tool_input).kind).toBe("shell");
    expect(r.p.cwd).toBe(want);
  });
  it("Cursor's beforeShellExecution names its command at the top, as the guard reads it", () => {
    const raw = fixture("cursor@documented", "beforeShellExecution");
    const r = detect("cursor", raw, {})!.dialect.read(raw, {})!;
    expect(classify(r.p.tool_name!, r.p.tool_input).command).toBe("echo hi > shell.txt");
  });
});

describe("the directory named by its place in the checkout", () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "cohent-cwd-")));
  const root = path.join(base, "repo");
  mkdirSync(path.join(root, "src/held"), { recursive: true });
  mkdirSync(path.join(base, "elsewhere"));
  symlinkSync(path.join(root, "src/held"), path.join(root, "link"));
  symlinkSync(path.join(root, "src/held"), path.join(base, "outside-link"));
  symlinkSync(path.join(base, "elsewhere"), path.join(root, "away"));
  symlinkSync(root, path.join(base, "repo-link"));
  const at = (...p: string[]) => path.join(...p);
  it.each([
    ["the root", root, root, root],
    ["a folder", at(root, "src/held"), root, at(root, "src/held")],
    ["a link inside to a folder inside", at(root, "link"), root, at(root, "src/held")],
    ["a link outside into the checkout", at(base, "outside-link"), root, at(root, "src/held")],
    ["the checkout opened through a link", at(base, "repo-link", "src"), root, at(root, "src")],
    ["the root named through a link", at(root, "src"), at(base, "repo-link"), at(base, "repo-link", "src")],
    ["a link inside to a folder outside: as named", at(root, "away"), root, at(root, "away")],
    ["outside: as named", at(base, "elsewhere"), root, at(base, "elsewhere")],
    ["missing: as named", at(root, "link", "gone"), root, at(root, "link", "gone")],
  ])("%s", (_, cwd, top, want) => expect(checkoutCwd(cwd, top)).toBe(want));
  it("no checkout: as named", () => expect(checkoutCwd(at(root, "link"), null)).toBe(at(root, "link")));
});
