import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { cohentCacheDir } from "./cache-dir.js";
import { configDir } from "./config-dir.js";

/**
 * The local usage ledger: one JSONL row of metadata per agent operation, in
 * the user's cache (never in the repository). A row holds the time, the
 * operation, the surface, the client and model names, the size of the
 * packet shown to the agent, the elapsed time and a repository tag. It
 * never holds prompts, paths, summaries, intents or tokens.
 *
 * Whether to record: COHENT_USAGE_LOG (1 / 0 / a file path) wins in both
 * directions; otherwise the stored preference (`doctor --usage on|off`);
 * otherwise off. Machine transports only read the preference.
 */

export type Surface = "cli" | "hook" | "agent-cli" | "mcp";

export interface UsageRow {
  t: string;
  op: string;
  surface: Surface;
  client: string | null;
  model: string | null;
  /** The Claude Code sub-agent that made the call, when one did. */
  agentId?: string;
  ok: boolean;
  code?: string;
  /** The guard's rule that refused a hook call (adapter/src/guard/rules.ts). */
  rule?: string;
  chars: number;
  tokens: number;
  ms: number;
  repo: string | null;
}

/** The ledger stays under this size: past it, the older half is dropped. */
export const USAGE_MAX_BYTES = 1024 * 1024;

export function defaultUsageFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(cohentCacheDir(env), "usage.jsonl");
}

function preferenceFile(): string {
  return join(configDir(), "preferences.json");
}

export function readPreference(): boolean | null {
  try {
    const p = JSON.parse(readFileSync(preferenceFile(), "utf8")) as { usageLog?: unknown };
    return typeof p.usageLog === "boolean" ? p.usageLog : null;
  } catch {
    return null;
  }
}

/** Stores the preference (only the interactive `doctor --usage on|off` calls this). */
export function writePreference(on: boolean): string {
  const file = preferenceFile();
  let prefs: Record<string, unknown> = {};
  try {
    prefs = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    /* start over */
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify({ ...prefs, usageLog: on }, null, 2) + "\n");
  return file;
}

/** Where rows go, or null when recording is off. */
export function usageTarget(env: NodeJS.ProcessEnv = process.env): {
  file: string | null;
  why: "env" | "preference" | "default";
} {
  const raw = env.COHENT_USAGE_LOG?.trim();
  if (raw) {
    if (/^(0|false|off|no)$/i.test(raw)) return { file: null, why: "env" };
    if (/^(1|true|on|yes)$/i.test(raw)) return { file: defaultUsageFile(env), why: "env" };
    return { file: resolve(raw), why: "env" };
  }
  const pref = readPreference();
  if (pref !== null) return { file: pref ? defaultUsageFile(env) : null, why: "preference" };
  return { file: null, why: "default" };
}

/** The ledger file to read or clear: the recording target, else the default place. */
export function usageFile(env: NodeJS.ProcessEnv = process.env): string {
  return usageTarget(env).file ?? defaultUsageFile(env);
}

const clip = (s: string | null | undefined, n = 64) =>
  typeof s === "string" && s ? s.replace(/[\x00-\x1f]/g, " ").slice(0, n) : null;

/**
 * Appends one row when recording is on. Never throws and never blocks an
 * agent: a ledger that cannot be written is skipped. The hook calls this with
 * surface "hook", the CLI commands with "cli".
 */
export function recordUsage(
  row: {
    op: string;
    surface: Surface;
    client?: string | null;
    model?: string | null;
    agentId?: string | null;
    ok: boolean;
    code?: string | undefined;
    rule?: string | undefined;
    chars?: number;
    ms: number;
    repo?: string | null;
  },
  env: NodeJS.ProcessEnv = process.env,
): void {
  try {
    const { file } = usageTarget(env);
    if (!file) return;
    const chars = Math.max(0, Math.floor(row.chars ?? 0));
    const out: UsageRow = {
      t: new Date().toISOString(),
      op: clip(row.op, 32) ?? "unknown",
      surface: row.surface,
      client: clip(row.client),
      model: clip(row.model),
      ...(row.agentId ? { agentId: clip(row.agentId)! } : {}),
      ok: row.ok,
      ...(row.code ? { code: clip(row.code, 48)! } : {}),
      ...(row.rule ? { rule: clip(row.rule, 48)! } : {}),
      chars,
      tokens: Math.ceil(chars / 4),
      ms: Math.max(0, Math.round(row.ms)),
      repo: clip(row.repo, 128),
    };
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    trim(file);
    appendFileSync(file, JSON.stringify(out) + "\n", { mode: 0o600 });
  } catch {
    /* the ledger is best effort */
  }
}

/** Keeps the ledger bounded: past USAGE_MAX_BYTES the older half of the rows goes. */
function trim(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size < USAGE_MAX_BYTES) return;
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  const keep = lines.slice(Math.floor(lines.length / 2));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, keep.join("\n") + "\n", { mode: 0o600 });
  renameSync(tmp, file);
}
