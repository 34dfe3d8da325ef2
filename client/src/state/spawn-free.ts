/**
 * Where the stdio MCP server marks a Claude Code session whose guard runs in
 * it (an `mcp_tool` handler on a client that refuses the call when the
 * handler fails): `<dir>/<session id>.<Claude Code's pid>`. The shell-only
 * gate beside the handler lets the command hook stand aside only then.
 * Per machine, never committed (init's .gitignore lines).
 */
export const SPAWN_FREE_DIR = ".cohent/spawn-free";
