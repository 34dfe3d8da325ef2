/**
 * Where the stdio MCP server marks a Claude Code session whose guard runs in
 * it (an `mcp_tool` handler on a client that refuses the call when the
 * handler fails): `<dir>/<session id>.<Claude Code's pid>`. The shell-only
 * gate beside the handler lets the command hook stand aside only then.
 * Per machine, never committed (init's .gitignore lines).
 */
export const SPAWN_FREE_DIR = ".cohent/spawn-free";

/**
 * The oldest Claude Code measured to refuse a call when an mcp_tool handler
 * fails (`onFailure: "block"`; bisected: 2.1.328, kept at the version the
 * suite pins). Below it the server leaves every decision to the command hook,
 * and the gate never trusts a mark: a file the model's shell can write.
 */
export const ON_FAILURE_FROM = [2, 1, 332] as const;
