import { existsSync, readFileSync } from "node:fs";
import { CohentError as ClientError } from "@cohent/protocol/codes";
import { SECTION_BEGIN as BEGIN, SECTION_END as END } from "../guard/guard-files.js";
import { isCohentHandler } from "./trust.js";

/**
 * How init merges its part into files people also edit: hook lists keep
 * other hooks where they are, a marked section is replaced whole, and
 * ignore-style files only gain the lines they lack.
 */

/** One handler of a client's hook list: a command, or (Claude Code) a handler of another type. */
export type HookHandler = { type: string; command?: string; timeout?: number; [k: string]: unknown };

type HookGroup = {
  matcher?: string;
  hooks: HookHandler[];
  [k: string]: unknown;
};

/** A JSON object file init merges into; absent or blank is empty, anything else is refused. */
export function readJsonObject(file: string): Record<string, any> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  if (text.trim() === "") return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return v;
  } catch {
    /* refuse below */
  }
  throw new ClientError(
    "INVALID_INPUT",
    `${file} is not a JSON object; fix it by hand, then rerun init (it never overwrites a file it cannot merge).`,
  );
}

/**
 * Puts our handlers into each event's list: where ours already are (all of
 * them replaced at the first one's place), appended otherwise; other hooks
 * keep their places.
 */
export function mergeHooks(
  config: Record<string, any>,
  wanted: { event: string; matcher?: string }[],
  handler: (event: string) => HookHandler | HookHandler[],
  changed: string[] = [],
): Record<string, any> {
  const out = structuredClone(config);
  const hooks = (
    out.hooks && typeof out.hooks === "object" && !Array.isArray(out.hooks) ? out.hooks : (out.hooks = {})
  ) as Record<string, HookGroup[]>;
  for (const { event, matcher } of wanted) {
    const groups = Array.isArray(hooks[event]) ? hooks[event]! : (hooks[event] = []);
    const next = [handler(event)].flat();
    const group = groups.find((g) => Array.isArray(g?.hooks) && g.hooks.some(isCohentHandler));
    if (group) {
      const first = group.hooks.findIndex(isCohentHandler);
      const have = group.hooks.filter(isCohentHandler);
      if (JSON.stringify(have) !== JSON.stringify(next) || group.matcher !== matcher) changed.push(event);
      const others = (hs: HookHandler[]) => hs.filter((h) => !isCohentHandler(h));
      group.hooks = [...others(group.hooks.slice(0, first)), ...next, ...others(group.hooks.slice(first))];
      if (matcher === undefined) delete group.matcher;
      else group.matcher = matcher;
    } else {
      groups.push({ ...(matcher === undefined ? {} : { matcher }), hooks: next });
      changed.push(event);
    }
  }
  return out;
}

/** Replaces the managed section between the markers, or appends it. */
export function mergeSection(existing: string, body: string): string {
  const section = `${BEGIN}\n${body.trimEnd()}\n${END}\n`;
  const start = existing.indexOf(BEGIN);
  const end = existing.indexOf(END);
  if (start !== -1 && end > start)
    return existing.slice(0, start) + section + existing.slice(end + END.length).replace(/^\n/, "");
  if (existing.trim() === "") return section;
  return existing.replace(/\n*$/, "\n\n") + section;
}

/** Appends the wanted lines an ignore-style file lacks, under one heading; unchanged when none is missing. */
export function appendMissing(existing: string, heading: string, want: string[]): string {
  const lines = existing.split(/\r?\n/);
  const missing = want.filter((w) => !lines.includes(w));
  if (missing.length === 0) return existing;
  return (
    (existing === "" || existing.endsWith("\n") ? existing : existing + "\n") +
    [heading, ...missing].join("\n") +
    "\n"
  );
}

/**
 * Per-machine state stays out of commits: the adapter's runtime.json, and the
 * @opencode-ai/plugin install OpenCode puts into .opencode/ at every start
 * (64 MB of node_modules; OpenCode's own .opencode/.gitignore covers it only
 * when the folder had none).
 */
export function mergeGitignore(existing: string): string {
  return appendMissing(existing, "# Cohent: per-machine session state", [
    ".cohent/runtime.json",
    ".cohent/runtime.json.*",
    ".cohent/spawn-free/",
    ".opencode/node_modules/",
  ]);
}
