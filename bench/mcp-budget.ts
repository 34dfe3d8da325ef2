import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ADAPTER_FILE, MCP_FILE } from "../adapter/build.mjs";
import { benchCheckout, median } from "./lib.js";

/**
 * The MCP server's footprint in an agent's context and in time: the whole
 * tools/list answer in tokens (characters / 4; budget 1,500), the two
 * bundle sizes, and the p50 of spawning the server, initializing, listing
 * and making one call against a local backend.
 */

export const TOOLS_LIST_BUDGET = 1_500;
/**
 * cohent-mcp.mjs, committed into every user's repository by `cohent init`. It
 * was 700,576 bytes (zod's 40 locales 264 KB, ajv 133 KB); adapter/build.mjs
 * leaves out what the server never uses (trimMcp), including zod's JSON Schema
 * generator now that the tool schemas are generated at build time: 259,941 bytes.
 */
export const MCP_BUNDLE_BUDGET = 270_000;
export const MCP_BUNDLE_BEFORE = 700_576;
const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 10);

export async function benchMcp(): Promise<Record<string, string | number>[]> {
  const co = await benchCheckout("bench/mcp");
  try {
    const { root, bundle } = co;
    execFileSync("git", ["init", "-q"], { cwd: root });
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: co.home,
      COHENT_AGENT_TOKEN: co.token,
      COHENT_SESSION: "bench",
      COHENT_USAGE_LOG: "0",
    };

    let listChars = 0;
    let toolCount = 0;
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const client = new Client({ name: "bench", version: "1" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [path.join(root, ".cohent", "cohent.mjs"), "mcp"],
          cwd: root,
          env,
          stderr: "ignore",
        }),
      );
      const list = await client.listTools();
      await client.callTool({ name: "context", arguments: {} });
      times.push(performance.now() - start);
      listChars = JSON.stringify(list).length;
      toolCount = list.tools.length;
      await client.close();
    }
    const tokens = Math.ceil(listChars / 4);
    const mcpBytes = statSync(path.join(path.dirname(bundle), MCP_FILE)).size;
    return [
      {
        measure: `tools/list (${toolCount} tools)`,
        value: `${listChars} chars = ${tokens} tokens`,
        budget: `${TOOLS_LIST_BUDGET} tokens`,
        ok: tokens <= TOOLS_LIST_BUDGET ? "yes" : "NO",
      },
      {
        measure: "spawn + initialize + tools/list + context call (p50)",
        value: `${median(times).toFixed(0)} ms`,
        budget: "-",
        ok: "-",
      },
      {
        measure: `${ADAPTER_FILE} (hook path)`,
        value: `${statSync(path.join(path.dirname(bundle), ADAPTER_FILE)).size} bytes`,
        budget: "no MCP SDK",
        ok: "-",
      },
      {
        measure: "cohent-mcp.mjs (mcp, agent)",
        value: `${mcpBytes} bytes (was ${MCP_BUNDLE_BEFORE})`,
        budget: `${MCP_BUNDLE_BUDGET} bytes`,
        ok: mcpBytes <= MCP_BUNDLE_BUDGET ? "yes" : "NO",
      },
    ];
  } finally {
    await co.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { table } = await import("./lib.js");
  table("MCP tools/list budget", await benchMcp());
  process.exit(0);
}
