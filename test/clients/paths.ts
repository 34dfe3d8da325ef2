import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const WORKSPACE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ARTIFACTS = join(WORKSPACE, "test", "artifacts");
export const RESULTS_DIR = join(ARTIFACTS, "clients-results");
export const REPORT_FILE = join(ARTIFACTS, "clients-report.md");
