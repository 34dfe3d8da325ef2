/**
 * cohent-mcp.mjs: the second file next to cohent.mjs, loaded only by the
 * `mcp` and `agent` commands, `doctor --cost`, and the hook's relay of a
 * sandboxed `agent` command, so a plain hook call never parses the MCP SDK
 * or zod. adapter/build.mjs bundles it from this entry point.
 */
export { agentMain, agentOutcome } from "./agent-cli.js";
export { mcpMain } from "./server.js";
export { usageCommand } from "@cohent/client";
export { onPacket } from "@cohent/client";
