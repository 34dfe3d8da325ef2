import type { WiringChange } from "@cohent/protocol";
import { BOUNDS } from "@cohent/protocol/bounds";
import { GUARD_FILES, SECTION_BEGIN, SECTION_END } from "./guard-files.js";
import {
  ADAPTER_FILES,
  adapterFileHash,
  AGENT_INSTRUCTIONS,
  CLAUDE_HOOKS,
  CODEX_HOOKS,
  CURSOR_RULE,
  claudeHandler,
  codexHandler,
  mergeHooks,
} from "./init.js";
import { mcpEntries } from "./mcp-setup.js";
import { canonicalJson, isCohentHook } from "./trust.js";

/**
 * The guard wiring's fingerprint: what in the checkout differs from what
 * `cohent init` wrote and wired, file by file (GUARD_FILES), each with what
 * changed in one short phrase. Only Cohent's own part of a shared file
 * counts, so that a person's unrelated settings raise nothing:
 *
 * - the adapter files' bytes, against the sha256 init recorded in
 *   project.json (no template can say what they are);
 * - Cohent's hook entries in .codex/hooks.json and .claude/settings.json
 *   (command, timeout, matcher, every field), against init's own handlers,
 *   and `disableAllHooks` in Claude Code's settings (project and local);
 * - the managed section of each instruction file and the Cursor rule,
 *   against init's text;
 * - the `cohent` MCP entry of each MCP file, when the file has one.
 *
 * Pure: the files come from `read` (null: no such file), the adapter
 * files' hashes from `hashOf` (wiring-check.ts keeps them by stat).
 */

export type Read = (rel: string) => Buffer | null;
/** An adapter file's hash (init's adapterFileHash), null when there is no such file; wiring-check.ts caches it by stat. */
export type HashOf = (rel: string) => string | null;

/** project.json as init writes it; only what the check reads. */
interface Recorded {
  adapterVersion?: unknown;
  adapterFiles?: unknown;
}

function parseObject(b: Buffer): Record<string, any> | null {
  try {
    const v = JSON.parse(b.toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** The fields of a Cohent hook entry (its group's matcher among them) that differ from init's handler. */
function differingFields(
  have: Record<string, unknown>,
  matcher: unknown,
  want: Record<string, unknown>,
  wantMatcher: string | undefined,
): string[] {
  const keys = [...new Set([...Object.keys(have), ...Object.keys(want)])].sort();
  const out = keys.filter((k) => canonicalJson(have[k]) !== canonicalJson(want[k]));
  if (canonicalJson(matcher) !== canonicalJson(wantMatcher)) out.push("matcher");
  return out.map((k) => k.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 24) || "field");
}

/**
 * Cohent's hook entries of one client's file: the events whose entry init
 * would add or change (mergeHooks decides, as init does), and for each what
 * differs: removed, or which fields.
 */
function hookChanges(
  config: Record<string, any>,
  wanted: { event: string; matcher?: string }[],
  handler: (event: string) => Record<string, unknown>,
): string[] {
  const changed: string[] = [];
  mergeHooks(config, wanted, handler as never, changed);
  const out: string[] = [];
  for (const { event, matcher } of wanted.filter((w) => changed.includes(w.event))) {
    const groups: any[] = Array.isArray(config.hooks?.[event]) ? config.hooks[event] : [];
    const group = groups.find(
      (g) => Array.isArray(g?.hooks) && g.hooks.some((h: any) => isCohentHook(h?.command)),
    );
    if (!group) {
      out.push(`hook entry ${event} removed`);
      continue;
    }
    const have = group.hooks.find((h: any) => isCohentHook(h?.command));
    const fields = differingFields(
      have && typeof have === "object" ? have : {},
      group.matcher,
      handler(event),
      matcher,
    );
    const phrase = `hook entry ${event} ${fields.join(", ")} changed`;
    // No field differs when only the key order does: init compares text, the client reads them alike.
    if (fields.length)
      out.push(phrase.length <= BOUNDS.wiringPhraseChars ? phrase : `hook entry ${event} changed`);
  }
  return out;
}

function disabled(config: Record<string, any>): string[] {
  return config.disableAllHooks !== undefined && config.disableAllHooks !== false
    ? ["disableAllHooks set"]
    : [];
}

/** A client's hook file: missing or unreadable means no Cohent hook runs from it. */
function hooksFile(
  wanted: { event: string; matcher?: string }[],
  handler: (event: string) => Record<string, unknown>,
  claude: boolean,
) {
  return (b: Buffer | null): string[] => {
    if (b === null) return ["file removed"];
    const config = parseObject(b);
    if (!config) return ["not a JSON object (no hook of it runs)"];
    return [...(claude ? disabled(config) : []), ...hookChanges(config, wanted, handler)];
  };
}

function section(b: Buffer | null): string[] {
  if (b === null) return ["file removed"];
  const text = b.toString("utf8");
  const start = text.indexOf(SECTION_BEGIN);
  const end = text.indexOf(SECTION_END);
  if (start === -1 || end < start) return ["managed section removed"];
  const body = text.slice(start + SECTION_BEGIN.length, end);
  return body === `\n${AGENT_INSTRUCTIONS.trimEnd()}\n` ? [] : ["managed section changed"];
}

/** An absolute path to a checkout's adapter (Codex's MCP entry names one): any checkout's is the same entry. */
const ABSOLUTE_ENTRY = /"(?:[A-Za-z]:)?[\\/][^"]*[\\/]\.cohent[\\/]cohent\.mjs"/g;
/** The [mcp_servers.cohent] table of a TOML file, up to the next table header, without blank lines. */
function tomlTable(text: string, header: string): string | null {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === header);
  if (start === -1) return null;
  let end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l));
  if (end === -1) end = lines.length;
  return lines
    .slice(start + 1, end)
    .map((l) => l.trim())
    .filter(Boolean)
    .join("\n")
    .replace(ABSOLUTE_ENTRY, '"<checkout>/.cohent/cohent.mjs"');
}

/** The `cohent` MCP entry, when the file has one: what init's merge would write for it, against what is there. */
function mcpEntry(merge: (t: string) => string, file: string) {
  return (b: Buffer | null): string[] => {
    if (b === null) return [];
    const text = b.toString("utf8");
    if (file.endsWith(".toml")) {
      const have = tomlTable(text, "[mcp_servers.cohent]");
      if (have === null) return [];
      return have === tomlTable(merge(text), "[mcp_servers.cohent]") ? [] : ["MCP entry cohent changed"];
    }
    const o = parseObject(b);
    const key =
      o?.mcpServers?.cohent !== undefined
        ? "mcpServers"
        : o?.servers?.cohent !== undefined
          ? "servers"
          : null;
    if (!o || !key) return [];
    let want: unknown;
    try {
      want = JSON.parse(merge(text))[key]?.cohent;
    } catch {
      return [];
    }
    return canonicalJson(o[key].cohent) === canonicalJson(want) ? [] : ["MCP entry cohent changed"];
  };
}

/** The adapter files against project.json's record of them. */
function adapterFiles(hashOf: HashOf, project: Recorded): WiringChange[] {
  const recorded =
    project.adapterFiles && typeof project.adapterFiles === "object"
      ? (project.adapterFiles as Record<string, unknown>)
      : null;
  if (!recorded) return [{ file: ".cohent/project.json", change: "adapter file hashes missing" }];
  const out: WiringChange[] = [];
  for (const name of ADAPTER_FILES) {
    const hash = hashOf(`.cohent/${name}`);
    if (hash === null) out.push({ file: `.cohent/${name}`, change: `${name} removed` });
    else if (hash !== recorded[name]) out.push({ file: `.cohent/${name}`, change: `${name} replaced` });
  }
  return out;
}

/** Each file init writes whole or merges into, by path, with what to compare; a `section` file needs none. */
function checkers(root: string): Record<string, (b: Buffer | null) => string[]> {
  return {
    ".codex/hooks.json": hooksFile(CODEX_HOOKS, codexHandler, false),
    ".claude/settings.json": hooksFile(CLAUDE_HOOKS, claudeHandler, true),
    ".claude/settings.local.json": (b) => {
      if (b === null) return [];
      const config = parseObject(b);
      return config ? disabled(config) : [];
    },
    ".cursor/rules/cohent.mdc": (b) =>
      b === null ? ["file removed"] : b.toString("utf8") === CURSOR_RULE ? [] : ["rule changed"],
    ...Object.fromEntries(mcpEntries(root).map((e) => [e.file, mcpEntry(e.merge, e.file)])),
  };
}

/** Every GUARD_FILES path has a check (a test holds the table to this). */
export function checkedPaths(root = "/"): string[] {
  return [".cohent/", ...Object.keys(checkers(root))];
}

/**
 * What differs from init's wiring, file by file; empty when intact. null
 * when the checkout was not written by an init that records its adapter
 * (project.json names no adapterVersion and no adapterFiles): nothing to
 * compare against.
 */
export function wiringChanges(
  read: Read,
  root: string,
  hashOf: HashOf = (rel) => {
    const b = read(rel);
    return b && adapterFileHash(b);
  },
): WiringChange[] | null {
  const raw = read(".cohent/project.json");
  const project = raw && parseObject(raw);
  if (!project) return [{ file: ".cohent/project.json", change: raw ? "not a JSON object" : "file removed" }];
  const recorded = project as Recorded;
  if (recorded.adapterVersion === undefined && recorded.adapterFiles === undefined) return null;
  const check = checkers(root);
  const out: WiringChange[] = [];
  for (const g of GUARD_FILES) {
    if (g.path === ".cohent/") out.push(...adapterFiles(hashOf, recorded));
    else if (g.kind === "section")
      out.push(...section(read(g.path)).map((change) => ({ file: g.path, change })));
    else if (check[g.path])
      out.push(...check[g.path]!(read(g.path)).map((change) => ({ file: g.path, change })));
  }
  return out;
}

/** One line a person reads: each file with what changed. */
export function describeChanges(changes: WiringChange[]): string {
  const by = new Map<string, string[]>();
  for (const c of changes) by.set(c.file, [...(by.get(c.file) ?? []), c.change]);
  return [...by].map(([file, what]) => `${file}: ${what.join("; ")}`).join(". ");
}
