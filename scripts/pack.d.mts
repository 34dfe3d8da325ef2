export function cohentVersion(): string;
export function buildPackage(out?: string): Promise<{ dir: string; version: string }>;
export function packTarball(dir?: string, destination?: string): string;
