export interface NodeLine {
  major: number;
  floor: string;
}
export function supportedLines(range?: string): NodeLine[];
export function describeLines(lines?: NodeLine[]): string;
