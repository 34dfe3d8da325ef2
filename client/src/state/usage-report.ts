import { existsSync, readFileSync, rmSync } from "node:fs";
import { fail, ok } from "../envelope.js";
import { usageFile, usageTarget, writePreference, type UsageRow } from "./usage.js";

/**
 * The ledger's report side (`doctor --cost`, `--clear`, `--usage on|off`).
 * It lives in the second file: only the recording half rides on the hook.
 */

export function readUsage(file = usageFile()): UsageRow[] {
  if (!existsSync(file)) return [];
  const rows: UsageRow[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as UsageRow;
      if (r && typeof r.op === "string" && typeof r.surface === "string") rows.push(r);
    } catch {
      /* a torn line is skipped */
    }
  }
  return rows;
}

export interface UsageGroup {
  key: string;
  calls: number;
  failures: number;
  chars: number;
  tokens: number;
  msTotal: number;
  msAvg: number;
}

export interface UsageReport {
  file: string;
  recording: boolean;
  why: "env" | "preference" | "default";
  rows: number;
  since: string | null;
  tokens: number;
  /** `rule`: the hook calls the guard refused, by the rule that refused them. */
  by: Record<"operation" | "surface" | "client" | "model" | "repository" | "rule", UsageGroup[]>;
}

export function aggregate(rows: UsageRow[], file: string, target = usageTarget()): UsageReport {
  const dims = {
    operation: (r: UsageRow) => r.op,
    surface: (r: UsageRow) => r.surface,
    client: (r: UsageRow) => r.client ?? "-",
    model: (r: UsageRow) => r.model ?? "-",
    repository: (r: UsageRow) => r.repo ?? "-",
    rule: (r: UsageRow) => r.rule ?? null,
  };
  const by = {} as UsageReport["by"];
  for (const [dim, keyOf] of Object.entries(dims) as [keyof typeof dims, (r: UsageRow) => string | null][]) {
    const groups = new Map<string, UsageGroup>();
    for (const r of rows) {
      const key = keyOf(r);
      if (key === null) continue;
      const g = groups.get(key) ?? { key, calls: 0, failures: 0, chars: 0, tokens: 0, msTotal: 0, msAvg: 0 };
      g.calls++;
      if (!r.ok) g.failures++;
      g.chars += r.chars ?? 0;
      g.tokens += r.tokens ?? 0;
      g.msTotal += r.ms ?? 0;
      groups.set(key, g);
    }
    by[dim] = [...groups.values()]
      .map((g) => ({ ...g, msAvg: Math.round(g.msTotal / g.calls) }))
      .sort((a, b) => b.tokens - a.tokens || b.calls - a.calls);
  }
  return {
    file,
    recording: target.file !== null,
    why: target.why,
    rows: rows.length,
    since: rows[0]?.t ?? null,
    tokens: rows.reduce((n, r) => n + (r.tokens ?? 0), 0),
    by,
  };
}

export function renderReport(r: UsageReport): string {
  const lines = [
    `Usage ledger ${r.file}: ${r.rows} rows${r.since ? ` since ${r.since}` : ""}, ${r.tokens} packet tokens. Recording is ${r.recording ? "on" : "off"} (${r.why === "env" ? "COHENT_USAGE_LOG" : r.why === "preference" ? "stored preference" : "default; turn on with doctor --usage on or COHENT_USAGE_LOG=1"}).`,
  ];
  for (const [dim, groups] of Object.entries(r.by)) {
    if (!groups.length) continue;
    lines.push("", `by ${dim}:`);
    for (const g of groups)
      lines.push(
        `  ${g.key.padEnd(24)} ${String(g.calls).padStart(6)} calls ${String(g.failures).padStart(4)} failed ${String(g.tokens).padStart(8)} tokens ${String(g.msAvg).padStart(6)} ms avg`,
      );
  }
  return lines.join("\n");
}

/** `doctor --cost [--json]`, `doctor --clear`, `doctor --usage on|off`: the ledger's local commands. Returns the exit code. */
export function usageCommand(
  args: readonly string[],
  json: boolean,
  out: (s: string) => void = (s) => process.stdout.write(s + "\n"),
): number {
  const file = usageFile();
  if (args.includes("--clear")) {
    const existed = existsSync(file);
    rmSync(file, { force: true });
    out(
      json
        ? JSON.stringify(ok("usage-clear", { file, deleted: existed }))
        : existed
          ? `Deleted ${file}.`
          : `No usage ledger at ${file}.`,
    );
    return 0;
  }
  const i = args.indexOf("--usage");
  if (i !== -1) {
    const v = args[i + 1];
    if (v !== "on" && v !== "off") {
      out(
        json
          ? JSON.stringify(fail("usage", "INVALID_INPUT", "usage: doctor --usage on|off"))
          : "usage: doctor --usage on|off",
      );
      return 1;
    }
    const pref = writePreference(v === "on");
    out(
      json
        ? JSON.stringify(ok("usage", { usageLog: v === "on", preference: pref }))
        : `Usage recording ${v} (stored in ${pref}; COHENT_USAGE_LOG still wins).`,
    );
    return 0;
  }
  const report = aggregate(readUsage(file), file);
  out(json ? JSON.stringify(ok("usage-cost", report)) : renderReport(report));
  return 0;
}
