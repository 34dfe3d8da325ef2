import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeMcpHandler } from "../../adapter/src/installer/claude-wiring.js";
import { payloadOf } from "../../mcp-server/src/hook-tool.js";
import type { TestBackend } from "../helpers/backend.js";
import { claude, hook } from "../adapter/helpers.js";
import { connect, startFixture, TOOL_NAMES, type Repo } from "./helpers.js";

/**
 * The guard as Claude Code's mcp_tool handler calls it: the built stdio MCP
 * server (node .cohent/cohent.mjs mcp) against a real backend, its `hook`
 * tool called with the arguments init's wiring lists, each answer compared
 * with the command hook's for the same payload.
 */

let backend: TestBackend, repo: Repo, token: string;
beforeAll(async () => {
  ({ backend, repo, token } = await startFixture("alice", "Ship the shop."));
});
afterAll(() => backend?.stop());

/** The tool's arguments for a payload, as Claude Code fills the handler's `${…}` placeholders (JSON text for objects). */
function argsFor(p: Record<string, any>): Record<string, string> {
  const input = claudeMcpHandler(p.hook_event_name).input as Record<string, string>;
  return Object.fromEntries(
    Object.entries(input).map(([k, v]) => {
      const field = /^\$\{(.+)\}$/.exec(v)?.[1];
      if (!field) return [k, v];
      const value = p[field];
      return [k, value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value)];
    }),
  );
}

const answer = (r: any) => JSON.parse(r.content[0].text);
const env = () => ({ COHENT_AGENT_TOKEN: token, ...claude.env });
const mark = (session: string) => path.join(repo.root, ".cohent", "spawn-free", `${session}.${process.pid}`);

describe("the guard's hook tool", () => {
  it("rebuilds the payload the wiring passes: JSON fields parsed, empty ones left out", () => {
    const p = { ...claude.write("s1", "/repo", "/repo/src/a.ts"), agent_id: "" };
    const listed = claudeMcpHandler("PreToolUse").input as Record<string, string>;
    const expected = Object.fromEntries(
      Object.entries(p).filter(([k, v]) => v !== "" && (k === "hook_event_name" || k in listed)),
    );
    expect(payloadOf(argsFor(p))).toEqual(expected);
    expect(expected.tool_input).toEqual({ file_path: "/repo/src/a.ts", content: "x" });
  });

  it("on Claude Code 2.1.332 answers as the command hook does, marks the session, and is not listed", async () => {
    const c = await connect(repo, { env: env(), name: "claude-code", version: "2.1.332" });
    try {
      expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(TOOL_NAMES);
      // Before any intent an edit is refused: the same reason as the command hook's.
      const write = claude.write("mcp-1", repo.root, path.join(repo.root, "src/a.ts"));
      const viaTool = answer(await c.client.callTool({ name: "hook", arguments: argsFor(write) }));
      const viaCommand = await hook(
        repo,
        claude.write("mcp-1b", repo.root, path.join(repo.root, "src/a.ts")),
        env(),
      );
      expect(viaTool.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(viaTool.hookSpecificOutput.permissionDecisionReason).toBe(viaCommand.denied);
      expect(existsSync(mark("mcp-1"))).toBe(true);
      // A read needs no decision: no answer, as the command hook gives none.
      const read = {
        ...claude.write("mcp-1", repo.root, "x"),
        tool_name: "Read",
        tool_input: { file_path: "README.md" },
      };
      expect(answer(await c.client.callTool({ name: "hook", arguments: argsFor(read) }))).toEqual({});
    } finally {
      await c.close();
    }
    // Its marks go with it: the next server may belong to another Claude Code.
    expect(existsSync(mark("mcp-1"))).toBe(false);
  });

  it("writes the usage ledger's row a hook process writes, one per call", async () => {
    const ledger = path.join(repo.home, "usage.jsonl");
    const c = await connect(repo, {
      env: { ...env(), COHENT_USAGE_LOG: ledger },
      name: "claude-code",
      version: "2.1.332",
    });
    try {
      const write = claude.write("mcp-4", repo.root, path.join(repo.root, "src/a.ts"));
      await c.client.callTool({ name: "hook", arguments: argsFor(write) });
    } finally {
      await c.close();
    }
    const rows = readFileSync(ledger, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows).toEqual([
      expect.objectContaining({ op: "hook:PreToolUse", surface: "hook", ok: false, code: "DENIED" }),
    ]);
  });

  it("a mark it cannot write changes no answer: the gate keeps the command hook", async () => {
    const dir = path.join(repo.root, ".cohent", "spawn-free");
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a folder");
    const c = await connect(repo, { env: env(), name: "claude-code", version: "2.1.332" });
    try {
      const read = {
        ...claude.write("mcp-3", repo.root, "x"),
        tool_name: "Read",
        tool_input: { file_path: "README.md" },
      };
      expect(answer(await c.client.callTool({ name: "hook", arguments: argsFor(read) }))).toEqual({});
    } finally {
      await c.close();
      rmSync(dir, { force: true });
    }
  });

  it("a failure inside the tool is a refusal with its reason, never a bare error", async () => {
    const c = await connect(repo, { env: env(), name: "claude-code", version: "2.1.340" });
    const project = path.join(repo.root, ".cohent", "project.json");
    const saved = readFileSync(project, "utf8");
    try {
      rmSync(project);
      const write = claude.write("mcp-2", repo.root, path.join(repo.root, "src/a.ts"));
      const r = answer(await c.client.callTool({ name: "hook", arguments: argsFor(write) }));
      expect(r.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(r.hookSpecificOutput.permissionDecisionReason).toMatch(/^Cohent: /);
    } finally {
      writeFileSync(project, saved);
      await c.close();
    }
  });

  it("on a Claude Code that ignores onFailure it answers no decision at once and marks nothing", async () => {
    for (const version of ["2.1.197", "2.1.294", "2.1.331"]) {
      const c = await connect(repo, { env: env(), name: "claude-code", version });
      try {
        const write = claude.write(`old-${version}`, repo.root, path.join(repo.root, "src/a.ts"));
        expect(answer(await c.client.callTool({ name: "hook", arguments: argsFor(write) }))).toEqual({});
        expect(existsSync(mark(`old-${version}`))).toBe(false);
      } finally {
        await c.close();
      }
    }
    // Another client calling the tool is not Claude Code: no decision, no mark.
    const other = await connect(repo, { env: env(), name: "codex-mcp-client", version: "9.9.9" });
    try {
      const write = claude.write("other", repo.root, path.join(repo.root, "src/a.ts"));
      expect(answer(await other.client.callTool({ name: "hook", arguments: argsFor(write) }))).toEqual({});
    } finally {
      await other.close();
    }
  });
});
