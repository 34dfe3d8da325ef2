import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";

/**
 * bench/RESULTS.md holds the latest figures of each bench: a bench run
 * replaces its own section (between its two markers), never appends, and
 * leaves the other benches' sections as they are. A section missing is
 * added at the end.
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
}
