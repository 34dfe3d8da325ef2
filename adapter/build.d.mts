export const OUTFILE: string;
export const MCP_FILE: string;
export function buildAdapter(opts?: { quiet?: boolean; outfile?: string }): Promise<string>;
