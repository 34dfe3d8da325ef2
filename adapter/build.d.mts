export const OUTFILE: string;
export const MCP_FILE: string;
/** The adapter itself beside OUTFILE's entry: what the hooks run. */
export const ADAPTER_FILE: string;
/** The adapter's version (adapter/package.json), written into both files' headers. */
export const VERSION: string;
/** The command that regenerates both files in a checkout, as their headers name it. */
export const REGENERATE: string;
/** The esbuild plugin that leaves out of cohent-mcp.mjs what the MCP server never uses. */
export const trimMcp: import("esbuild").Plugin;
export function buildAdapter(opts?: { quiet?: boolean; outfile?: string }): Promise<string>;
