// vitest globalSetup (root config): one temporary folder for the run, removed at its end. The suites
// make their checkouts, bundles and Git repositories under os.tmpdir(), and most leave them there:
// one whole run left 242 folders and 258 MB in /tmp (measured by their times). CI runs on the session's
// machine as the session left it, so every run's leftovers would stay. TMPDIR, set here before the
// workers start, sends every folder the run's processes make (tests, servers, hooks) into this one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

let dir: string | null = null;
let previous: string | undefined;

export function setup(): void {
  previous = process.env.TMPDIR;
  dir = mkdtempSync(path.join(tmpdir(), "cohent-run-"));
  process.env.TMPDIR = dir;
}

export function teardown(): void {
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
