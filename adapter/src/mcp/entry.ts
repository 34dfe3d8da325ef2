/**
 * cohent-mcp.mjs: the second file next to cohent.mjs, loaded only by the
 * `mcp` and `agent` commands, so the hook never parses the MCP SDK or zod.
 */
export { agentMain } from "./agent-cli.js";
export { mcpMain } from "./server.js";
export { usageCommand } from "./usage-report.js";
