export function cohentVersion(): string;
export function buildPackage(): Promise<{ dir: string; version: string }>;
export function packTarball(dir?: string, destination?: string): string;
