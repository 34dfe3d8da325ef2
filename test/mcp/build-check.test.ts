import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeMcpHandler } from "../../adapter/src/installer/claude-wiring.js";
import { IN_PROCESS_MARK } from "../../adapter/src/loader/in-process-mark.js";
import type { TestBackend } from "../helpers/backend.js";
import { writeVariantBuild } from "../helpers/build-variant.js";
import { claude } from "../adapter/helpers.js";
import { connect, startFixture, type Repo } from "./helpers.js";

/**
 * The MCP server Claude Code calls as its mcp_tool handler lives as long as the
 * session: it must decide with the build the checkout holds at each call, not the
 * one it loaded at start (issue 50 item 2, loader/build-check.ts). The built server,
 * a real backend, the checkout's adapter files deleted, replaced by one that throws,
 * and upgraded between two calls of one server process.
 */

let backend: TestBackend, repo: Repo, token: string;
beforeAll(async () => {
  ({ backend, repo, token } = await startFixture("alice", "Ship the shop."));
});
afterAll(() => backend?.stop());

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

/** The refusal's reason, or "allowed" when the tool answered no decision. */
function outcome(r: any): string {
  const a = JSON.parse(r.content[0].text);
  const out = a.hookSpecificOutput;
  return out?.permissionDecision === "deny" ? `denied: ${out.permissionDecisionReason}` : "allowed";
}

const NO_INTENT = /^denied: Cohent: .*no (structured intent|prompt or intent)/;
const REPAIR = /Repair: npx cohent init --upgrade/;

describe("the MCP server's guard runs the build the checkout holds", () => {
  it("deleted, throwing at load, repaired and upgraded between calls: each call decided by the build on disk", async () => {
    const dot = path.join(repo.root, ".cohent");
    const cjs = path.join(dot, "cohent.cjs");
    const core = path.join(dot, "cohent-core.js");
    const saved = { cjs: readFileSync(cjs), core: readFileSync(core) };
    /** Both files written back as an upgrade writes them: new files renamed into place. */
    const restore = () => {
      for (const [file, bytes] of [
        [core, saved.core],
        [cjs, saved.cjs],
      ] as const) {
        writeFileSync(`${file}.new`, bytes);
        renameSync(`${file}.new`, file);
      }
    };
    const c = await connect(repo, {
      env: { COHENT_AGENT_TOKEN: token, CLAUDECODE: "1" },
      name: "claude-code",
      version: "2.1.332",
    });
    const S = "build-1";
    let n = 0;
    const call = async (p: Record<string, any>) =>
      outcome(
        await c.client.callTool({ name: "hook", arguments: argsFor({ ...p, tool_use_id: `t${n++}` }) }),
      );
    const write = () => call(claude.write(S, repo.root, path.join(repo.root, "src/a.ts")));
    const touch = () => call(claude.bash(S, repo.root, "touch src/b.ts"));
    const read = () =>
      call({ ...claude.write(S, repo.root, "x"), tool_name: "Read", tool_input: { file_path: "README.md" } });
    try {
      // The build it started with: a read needs no decision, a write before any intent is refused.
      expect(await read()).toBe("allowed");
      expect(await write()).toMatch(NO_INTENT);

      // Deleted: every tool call refused, naming the file and the repair.
      rmSync(cjs);
      rmSync(core);
      for (const r of [await read(), await write(), await touch()]) {
        expect(r).toMatch(/^denied: Cohent: \.cohent\/cohent\.cjs is missing/);
        expect(r).toMatch(REPAIR);
      }
      // A PostToolUse is let be (nothing to refuse), never a failure.
      const post = claude.write(S, repo.root, path.join(repo.root, "src/a.ts"), "PostToolUse");
      expect(await call({ ...post, tool_response: { success: true } })).toBe("allowed");

      // cohent.cjs replaced by a file that throws when it loads.
      restore();
      writeFileSync(cjs, `// ${IN_PROCESS_MARK}\nthrow new Error("a broken build at " + __filename);\n`);
      for (const r of [await read(), await write(), await touch()]) {
        expect(r).toMatch(/^denied: Cohent: \.cohent\/cohent\.cjs failed to load \(Error\)\..*Repair/);
        expect(r).not.toContain(repo.root); // the broken file's own text never reaches the model
      }
      // cohent-core.js replaced by one that throws: not of cohent.cjs's build, refused before it runs.
      restore();
      writeFileSync(core, `throw new Error("a broken core");\n`);
      expect(await write()).toMatch(/^denied: Cohent: \.cohent\/cohent-core\.js is not from the same build/);

      // Repaired: the checkout's build decides again, as it did at start.
      restore();
      expect(await read()).toBe("allowed");
      expect(await write()).toMatch(NO_INTENT);

      // Upgraded: the next call is decided by the new build (its reasons are its own).
      writeVariantBuild(dot, [["no prompt or intent", "NO PROMPT OR INTENT"]]);
      expect(await write()).toMatch(/^denied: Cohent: NO PROMPT OR INTENT/);
      expect(await read()).toBe("allowed");
    } finally {
      restore();
      await c.close();
    }
  });
});
