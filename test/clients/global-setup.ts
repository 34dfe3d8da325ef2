// Before: install any missing pinned client (a fresh machine passes without a
// separate step) and clear the previous run's results. After: the report.
import { mkdirSync, rmSync } from "node:fs";
import { installAll } from "./install.ts";
import { writeReport } from "./report.ts";
import { RESULTS_DIR } from "./paths.ts";

export function setup(): void {
  installAll();
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
}

export function teardown(): void {
  process.stdout.write("\n" + writeReport() + "\n");
}
