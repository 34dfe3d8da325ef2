import type { WiringChange } from "@cohent/protocol";
import { BOUNDS } from "@cohent/protocol/bounds";
import {
  COPILOT_HOOKS_DIR,
  GUARD_FILES,
  OPENCODE_PLUGIN_DIR,
  OPENCODE_PLUGINS_DIR,
  SECTION_BEGIN,
  SECTION_END,
} from "../guard/guard-files.js";
import {
  COPILOT_EVENTS,
  COPILOT_HOOKS_FILE,
  COPILOT_SETTINGS_FILES,
  copilotHandler,
  CURSOR_EVENTS,
  CURSOR_HOOKS_FILE,
  cursorHandler,
  GEMINI_HOOKS,
  GEMINI_SETTINGS_FILE,
  geminiHandler,
  mergeFlatHooks,
  type FlatHandler,
} from "./host-wiring.js";
import {
  ADAPTER_FILES,
  adapterFileHash,
  AGENT_INSTRUCTIONS,
  CLAUDE_HOOKS,
  CODEX_HOOKS,
  CURSOR_RULE,
  claudeHandler,
  codexHandler,
} from "./init.js";
import { mergeHooks, type HookHandler } from "./merge-files.js";
import { mcpEntries } from "./mcp-setup.js";
import { OPENCODE_PLUGIN, OPENCODE_PLUGIN_FILE, pluginText } from "./opencode-plugin.js";
import { canonicalJson, isCohentHandler, isCohentHook } from "./trust.js";

/**
 * The guard wiring's fingerprint: what in the checkout differs from what
 * `cohent init` wrote and wired, file by file (GUARD_FILES), each with what
 * changed in one short phrase. Only Cohent's own part of a shared file
 * counts, so that a person's unrelated settings raise nothing:
 *
 * - the adapter files' bytes, against the sha256 init recorded in
 *   project.json (no template can say what they are);
 * - Cohent's hook entries in .codex/hooks.json, .claude/settings.json,
 *   .github/hooks/cohent.json (Copilot CLI), .gemini/settings.json and
 *   .cursor/hooks.json (command, timeout, matcher, every field), against
 *   init's own handlers, and each client's switch that turns hooks off:
 *   `disableAllHooks` (Claude Code, project and local; Copilot CLI, its
 *   hooks file and repository settings), Gemini's `hooksConfig`;
 * - the OpenCode plugin's bytes, against init's text (a plugin OpenCode
 *   cannot load is skipped silently, so only its exact text is known good);
 * - the managed section of each instruction file and the Cursor rule,
 *   against init's text;
 * - the `cohent` MCP entry of each MCP file, when the file has one.
 *
 * Pure: the files come from `read` (null: no such file) and `list` (a
 * folder's file names), the adapter files' hashes from `hashOf`
 * (wiring-check.ts keeps them by stat).
 */

export type Read = (rel: string) => Buffer | null;
/** An adapter file's hash (init's adapterFileHash), null when there is no such file; wiring-check.ts caches it by stat. */
export type HashOf = (rel: string) => string | null;
/** The names of the files in a folder of the checkout (ending in "/"), null when there is no such folder. */
export type List = (relDir: string) => string[] | null;

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
  handler: (event: string) => HookHandler | HookHandler[],
): string[] {
  const changed: string[] = [];
  mergeHooks(config, wanted, handler, changed);
  const out: string[] = [];
  for (const { event, matcher } of wanted.filter((w) => changed.includes(w.event))) {
    const groups: any[] = Array.isArray(config.hooks?.[event]) ? config.hooks[event] : [];
    const group = groups.find((g) => Array.isArray(g?.hooks) && g.hooks.some(isCohentHandler));
    if (!group) {
      out.push(`hook entry ${event} removed`);
      continue;
    }
    const have: any[] = group.hooks.filter(isCohentHandler);
    const fields = new Set<string>();
    for (const w of [handler(event)].flat()) {
      const h = have.find((x) => x?.type === w.type);
      // Claude Code's second handler (claude-wiring.ts): named by its type, the command's fields by theirs.
      const prefix = w.type === "command" ? "" : `${w.type}-`;
      if (!h) out.push(`hook entry ${event} ${w.type} handler removed`);
      else
        for (const f of differingFields(h, group.matcher, w, matcher))
          fields.add(f === "matcher" ? f : prefix + f);
    }
    const phrase = `hook entry ${event} ${[...fields].join(", ")} changed`;
    // No field differs when only the key order does: init compares text, the client reads them alike.
    if (fields.size)
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
  handler: (event: string) => HookHandler | HookHandler[],
  claude: boolean,
) {
  return (b: Buffer | null): string[] => {
    if (b === null) return ["file removed"];
    const config = parseObject(b);
    if (!config) return ["not a JSON object (no hook of it runs)"];
    return [...(claude ? disabled(config) : []), ...hookChanges(config, wanted, handler)];
  };
}

/** Cohent's handlers in a flat hooks file (Copilot, Cursor): the events whose handler init would add or change, and what differs. */
function flatHookChanges(
  config: Record<string, any>,
  file: string,
  events: readonly string[],
  handler: (event: string) => FlatHandler,
  key: "bash" | "command",
): string[] {
  const changed: string[] = [];
  try {
    mergeFlatHooks(config, file, events, handler, key, changed);
  } catch {
    return ["version changed (the client may load none of it)"];
  }
  const out: string[] = [];
  for (const event of changed) {
    const list: any[] = Array.isArray(config.hooks?.[event]) ? config.hooks[event] : [];
    const have = list.find((h) => isCohentHook(h?.[key]));
    if (!have) {
      out.push(`hook entry ${event} removed`);
      continue;
    }
    const fields = differingFields(have, undefined, handler(event), undefined);
    const phrase = `hook entry ${event} ${fields.join(", ")} changed`;
    if (fields.length)
      out.push(phrase.length <= BOUNDS.wiringPhraseChars ? phrase : `hook entry ${event} changed`);
  }
  return out;
}

/** Copilot CLI: `disableAllHooks` in any of its files switches off every hook, repository and user alike. */
function copilotDisabled(config: Record<string, any>): string[] {
  return config.disableAllHooks !== undefined && config.disableAllHooks !== false
    ? ["disableAllHooks set"]
    : [];
}

function copilotHooks(b: Buffer | null): string[] {
  if (b === null) return ["file removed"];
  const config = parseObject(b);
  if (!config) return ["not a JSON object (no hook of it runs)"];
  return [
    ...copilotDisabled(config),
    ...flatHookChanges(config, COPILOT_HOOKS_FILE, COPILOT_EVENTS, copilotHandler, "bash"),
  ];
}

/** Gemini CLI: `hooksConfig.enabled: false` runs no hook at all; `hooksConfig.disabled` lists hooks by name or command. */
function geminiSettings(b: Buffer | null): string[] {
  if (b === null) return ["file removed"];
  const config = parseObject(b);
  if (!config) return ["not a JSON object (no hook of it runs)"];
  const out: string[] = [];
  const hc = config.hooksConfig;
  if (hc && typeof hc === "object" && hc.enabled === false)
    out.push("hooksConfig.enabled false (no hook runs)");
  const ours = new Set(GEMINI_HOOKS.map((h) => geminiHandler(h.event).command));
  if (
    Array.isArray(hc?.disabled) &&
    hc.disabled.some((d: unknown) => ours.has(d as string) || isCohentHook(d))
  )
    out.push("hooksConfig.disabled names a Cohent hook");
  return [...out, ...hookChanges(config, GEMINI_HOOKS, geminiHandler)];
}

function cursorHooks(b: Buffer | null): string[] {
  if (b === null) return ["file removed"];
  const config = parseObject(b);
  if (!config) return ["not a JSON object (no hook of it runs)"];
  return flatHookChanges(config, CURSOR_HOOKS_FILE, CURSOR_EVENTS, cursorHandler, "command");
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

type Check = (read: Read, list: List) => WiringChange[];

/** A check of one file's bytes, its changes named by that file. */
const file =
  (path: string, check: (b: Buffer | null) => string[]): Check =>
  (read) =>
    check(read(path)).map((change) => ({ file: path, change }));

/** Copilot CLI runs every hook file of .github/hooks/: ours, and none of the others may switch hooks off. */
const copilotHooksDir: Check = (read, list) => [
  ...file(COPILOT_HOOKS_FILE, copilotHooks)(read, list),
  ...(list(COPILOT_HOOKS_DIR) ?? [])
    .filter((n) => n.endsWith(".json") && `${COPILOT_HOOKS_DIR}${n}` !== COPILOT_HOOKS_FILE)
    .flatMap((n) => {
      const config = parseObject(read(`${COPILOT_HOOKS_DIR}${n}`) ?? Buffer.alloc(0));
      return (config ? copilotDisabled(config) : []).map((change) => ({
        file: `${COPILOT_HOOKS_DIR}${n}`,
        change,
      }));
    }),
];

/** OpenCode's plugin, byte for byte (line endings aside): OpenCode skips one it cannot load, silently. */
const opencodePlugin = file(OPENCODE_PLUGIN_FILE, (b) =>
  b === null
    ? ["file removed"]
    : pluginText(b) === OPENCODE_PLUGIN
      ? []
      : ["plugin changed (OpenCode skips a plugin it cannot load, silently)"],
);

/** OpenCode loads .opencode/plugins/ too, where init writes nothing: a Cohent plugin there would run every hook twice. */
const opencodePluginsDir: Check = (read, list) =>
  (list(OPENCODE_PLUGINS_DIR) ?? [])
    .filter(
      (n) => /\.[cm]?[jt]s$/.test(n) && isCohentHook(read(`${OPENCODE_PLUGINS_DIR}${n}`)?.toString("utf8")),
    )
    .map((n) => ({
      file: `${OPENCODE_PLUGINS_DIR}${n}`,
      change: "a second Cohent plugin (it runs every hook twice)",
    }));

/** Each file (or folder) of the guard's table that init writes whole or merges into, with what to compare; a `section` file needs none. */
function checkers(root: string): Record<string, Check> {
  return {
    ".codex/hooks.json": file(".codex/hooks.json", hooksFile(CODEX_HOOKS, codexHandler, false)),
    ".claude/settings.json": file(".claude/settings.json", hooksFile(CLAUDE_HOOKS, claudeHandler, true)),
    ".claude/settings.local.json": file(".claude/settings.local.json", (b) => {
      if (b === null) return [];
      const config = parseObject(b);
      return config ? disabled(config) : [];
    }),
    ".cursor/rules/cohent.mdc": file(".cursor/rules/cohent.mdc", (b) =>
      b === null ? ["file removed"] : b.toString("utf8") === CURSOR_RULE ? [] : ["rule changed"],
    ),
    [COPILOT_HOOKS_DIR]: copilotHooksDir,
    ...Object.fromEntries(
      COPILOT_SETTINGS_FILES.map((f) => [
        f,
        file(f, (b) => {
          const config = b && parseObject(b);
          return config ? copilotDisabled(config) : [];
        }),
      ]),
    ),
    [GEMINI_SETTINGS_FILE]: file(GEMINI_SETTINGS_FILE, geminiSettings),
    [CURSOR_HOOKS_FILE]: file(CURSOR_HOOKS_FILE, cursorHooks),
    [OPENCODE_PLUGIN_DIR]: opencodePlugin,
    [OPENCODE_PLUGINS_DIR]: opencodePluginsDir,
    ...Object.fromEntries(mcpEntries(root).map((e) => [e.file, file(e.file, mcpEntry(e.merge, e.file))])),
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
  list: List = () => null,
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
    else if (check[g.path]) out.push(...check[g.path]!(read, list));
  }
  return out;
}

/** One line a person reads: each file with what changed. */
export function describeChanges(changes: WiringChange[]): string {
  const by = new Map<string, string[]>();
  for (const c of changes) by.set(c.file, [...(by.get(c.file) ?? []), c.change]);
  return [...by].map(([file, what]) => `${file}: ${what.join("; ")}`).join(". ");
}
