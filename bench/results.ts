import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { fileURLToPath } from "node:url";

/**
 * bench/RESULTS.md holds the latest figures of each bench: a bench run
 * replaces its own section (between its two markers), never appends, and
 * leaves the other benches' sections as they are. A section missing is
 * added at the end. The file is then formatted as `npm test`'s
 * format:check wants it (prettier aligns the tables and drops the indent
 * of a sub-row's label).
 */

const FILE = new URL("./RESULTS.md", import.meta.url);

/** The run's date and machine, the first line of a section. */
export function runLine(): string {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ");
  return `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${process.version}, ${os.cpus().length} cores, load ${load} at its end.`;
}

export function replaceSection(name: string, body: string): void {
  const begin = `<!-- ${name}: begin (written by the bench; replaced at each run) -->`;
  const end = `<!-- ${name}: end -->`;
  const text = readFileSync(FILE, "utf8");
  const section = `${begin}\n\n${body.trim()}\n\n${end}`;
  const at = text.indexOf(begin);
  const stop = text.indexOf(end);
  const next =
    at !== -1 && stop > at
      ? text.slice(0, at) + section + text.slice(stop + end.length)
      : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(FILE, next);
  const prettier = createRequire(import.meta.url).resolve("prettier/bin/prettier.cjs");
  execFileSync(process.execPath, [prettier, "--write", "--log-level", "warn", fileURLToPath(FILE)], {
    stdio: "inherit",
  });
}
