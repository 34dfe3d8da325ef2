export const OUTFILE: string;
export function buildAdapter(opts?: { quiet?: boolean; outfile?: string }): Promise<string>;
