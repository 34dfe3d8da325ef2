import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestBackend } from "../helpers/backend.js";
import { pinnedTool } from "../helpers/pinned-tool.js";
import { startFixture, TOOL_NAMES, type Repo } from "./helpers.js";

/**
 * A second, independent MCP client: @modelcontextprotocol/inspector in its
 * CLI mode (exit 0 on success, 5 on isError). It advertises roots: none on
 * the command line, the configured ones with --config. Its engines field asks
 * for Node 22 (it runs on 20), so it lives in a pinned-tool cache, not among
 * the workspace's devDependencies.
 */

let INSPECTOR: string;
let backend: TestBackend, repo: Repo, token: string;
const home = mkdtempSync(path.join(os.tmpdir(), "cohent-inspector-"));
beforeAll(async () => {
  INSPECTOR = pinnedTool("@modelcontextprotocol/inspector", "2.12.0", "mcp-inspector");
  ({ backend, repo, token } = await startFixture("carol"));
}, 300_000);
afterAll(() => backend?.stop());

function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      INSPECTOR,
      ["--cli", ...args],
      {
        cwd: repo.root,
        env: { PATH: process.env.PATH!, HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory" },
        timeout: 60_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as unknown as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The built server as the inspector's command line, with `-e NAME=value` per variable. */
function server(env: Record<string, string>): string[] {
  return ["node", repo.script, "mcp", ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`])];
}

describe("MCP Inspector CLI against the built server", () => {
  it("lists the seven tools with portable schemas, and calls one through a config that declares the repository as a root", async () => {
    const list = await inspector([
      ...server({ HOME: repo.home }),
      "--method",
      "tools/list",
      "--strict",
      "--format",
      "json",
    ]);
    expect(list.code, list.stderr).toBe(0);
    const tools = JSON.parse(list.stdout).result?.tools ?? JSON.parse(list.stdout).tools;
    expect(tools.map((t: { name: string }) => t.name)).toEqual(TOOL_NAMES);
    expect(list.stderr).not.toContain("Warning: tool");
    expect(list.stderr).not.toMatch(/[1-9]\d* (errors|warnings)/);

    const config = path.join(home, "servers.json");
    const env = {
      HOME: repo.home,
      COHENT_AGENT_TOKEN: token,
      COHENT_SESSION: "inspector-1",
      COHENT_USAGE_LOG: "0",
    };
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          cohent: {
            command: process.execPath,
            args: [repo.script, "mcp"],
            env,
            roots: [{ uri: pathToFileURL(repo.root).href }],
          },
        },
      }),
    );
    const call = await inspector([
      "--config",
      config,
      "--server",
      "cohent",
      "--method",
      "tools/call",
      "--tool-name",
      "publish",
      "--tool-args-json",
      JSON.stringify({ prompt: "From the inspector" }),
      "--format",
      "json",
    ]);
    expect(call.code, call.stderr).toBe(0);
    const result = JSON.parse(call.stdout).result;
    expect(result.structuredContent).toMatchObject({
      version: 1,
      ok: true,
      operation: "publish",
      data: { action: "plan" },
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  }, 60_000);

  it("a client that advertises roots but lists none is refused with REPOSITORY_OUTSIDE_ROOT (exit 5, isError)", async () => {
    const r = await inspector([
      ...server({ HOME: repo.home, COHENT_AGENT_TOKEN: token, COHENT_USAGE_LOG: "0" }),
      "--method",
      "tools/call",
      "--tool-name",
      "context",
      "--format",
      "json",
    ]);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stdout).result.structuredContent.error).toMatchObject({
      code: "REPOSITORY_OUTSIDE_ROOT",
      retryable: false,
    });
  }, 60_000);
});
