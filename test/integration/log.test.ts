import { spawnSync } from "node:child_process";
import { mkdtempSync, openSync, closeSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * The server's logger (backend/src/log.ts) in a process of its own, as
 * `cohent serve` runs it, its stderr a file: the child reads that file's size
 * itself, so what was written when is exact, not a race between two pipes.
 */
function run(body: string): { report: Record<string, number>; log: string; status: number | null } {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "cohent-log-")), "stderr");
  const fd = openSync(file, "w");
  const script = `import { fstatSync } from "node:fs"; import { createLogger } from "./backend/src/log.ts";
    const log = createLogger("info"); const size = () => fstatSync(2).size; const report = {};
    const done = () => { process.stdout.write(JSON.stringify(report)); process.exit(0); };
    ${body}`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", fd],
    encoding: "utf8",
    timeout: 30_000,
  });
  closeSync(fd);
  return { report: JSON.parse(r.stdout || "{}"), log: readFileSync(file, "utf8"), status: r.status };
}

describe("the server's logger", () => {
  it("holds info lines; a warning is written at once, after the lines before it; exit writes the rest", () => {
    const { report, log, status } = run(
      `log.info("first-info"); report.held = size(); log.warn("the-warning"); report.warned = size(); log.info("last-info"); done();`,
    );
    expect(status).toBe(0);
    expect(report.held).toBe(0);
    expect(report.warned).toBeGreaterThan(0);
    const order = ["first-info", "the-warning", "last-info"].map((m) => log.indexOf(m));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("writes held info lines within its flush interval, with nothing else logged", () => {
    const { report, log } = run(
      `log.info("lone-info"); report.held = size(); setTimeout(() => { report.later = size(); done(); }, 400);`,
    );
    expect(report.held).toBe(0);
    expect(report.later).toBeGreaterThan(0);
    expect(log).toContain("lone-info");
  });
});
