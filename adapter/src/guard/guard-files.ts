/**
 * The guard's own files: what `cohent init` writes and wires. An agent that
 * edits them can switch the guard off for every agent in the checkout (a
 * hook entry removed, the adapter replaced), so they are not the agents' to
 * change: a person changes them with `cohent init`. One table, read by the
 * edit and shell guards and by the wiring fingerprint.
 *
 * - `whole`: the file (or, ending in "/", every file below the folder) is
 *   Cohent's, or holds Cohent's hook or MCP entries among other settings.
 * - `section`: an instruction file in which init manages one marked section.
 */
export interface GuardFile {
  path: string;
  kind: "whole" | "section";
}

/** The files of the other clients' wiring (host-wiring.ts writes and reads them), named once here. */
export const COPILOT_HOOKS_DIR = ".github/hooks/";
export const COPILOT_HOOKS_FILE = `${COPILOT_HOOKS_DIR}cohent.json`;
/** Copilot's repository settings: they can hold hooks and `disableAllHooks` too (1.0.85 and 1.0.102 read them). */
export const COPILOT_SETTINGS_FILES = [
  ".github/copilot/settings.json",
  ".github/copilot/settings.local.json",
];
export const GEMINI_SETTINGS_FILE = ".gemini/settings.json";
export const CURSOR_HOOKS_FILE = ".cursor/hooks.json";
export const OPENCODE_PLUGIN_DIR = ".opencode/plugin/";
export const OPENCODE_PLUGIN_FILE = `${OPENCODE_PLUGIN_DIR}cohent.js`;
/** OpenCode loads .opencode/plugins/ as well as plugin/ (measured); init writes nothing there. */
export const OPENCODE_PLUGINS_DIR = ".opencode/plugins/";
/** The files that hold the MCP entries init prints and writes with --mcp-write (mcp-setup.ts). */
export const MCP_FILES = {
  claude: ".mcp.json",
  codex: ".codex/config.toml",
  cursor: ".cursor/mcp.json",
  vscode: ".vscode/mcp.json",
} as const;

export const GUARD_FILES: readonly GuardFile[] = [
  { path: ".cohent/", kind: "whole" },
  { path: ".codex/hooks.json", kind: "whole" },
  { path: ".claude/settings.json", kind: "whole" },
  // Not written by init, but Claude Code reads hooks (and `disableAllHooks`) from it too.
  { path: ".claude/settings.local.json", kind: "whole" },
  { path: ".cursor/rules/cohent.mdc", kind: "whole" },
  // Copilot CLI runs every hook file of the folder, and a hook there can rewrite a call's arguments
  // (modifiedArgs) or switch every hook off (disableAllHooks): the whole folder, not only cohent.json.
  { path: COPILOT_HOOKS_DIR, kind: "whole" },
  // Copilot's repository settings: hooks and disableAllHooks live there too.
  ...COPILOT_SETTINGS_FILES.map((path) => ({ path, kind: "whole" as const })),
  { path: GEMINI_SETTINGS_FILE, kind: "whole" },
  { path: CURSOR_HOOKS_FILE, kind: "whole" },
  // OpenCode loads every plugin in both folders, in order; a later one can change a call's arguments after the guard's.
  { path: OPENCODE_PLUGIN_DIR, kind: "whole" },
  { path: OPENCODE_PLUGINS_DIR, kind: "whole" },
  ...Object.values(MCP_FILES).map((path) => ({ path, kind: "whole" as const })),
  { path: "AGENTS.md", kind: "section" },
  { path: ".github/copilot-instructions.md", kind: "section" },
];

/** The markers of the section init manages in an instruction file (init.ts mergeSection). */
export const SECTION_BEGIN =
  "<!-- cohent:begin (managed by `npx cohent init`; edits inside are replaced) -->";
export const SECTION_END = "<!-- cohent:end -->";

/** The managed section of an instruction file's text, markers included, found as mergeSection finds it; null without one. */
export function managedSection(text: string | null): string | null {
  if (text === null) return null;
  const start = text.indexOf(SECTION_BEGIN);
  const end = text.indexOf(SECTION_END);
  return start !== -1 && end > start ? text.slice(start, end + SECTION_END.length) : null;
}

/**
 * How a repository path (possibly a glob) stands to the guard's files:
 * `is` one (the file, a folder entry itself, or a path inside that folder),
 * `holds` one (a folder above a guard file, the root excepted: deleting or
 * moving it takes the file along), or neither.
 */
export type Reach = { relation: "is" | "holds"; file: GuardFile } | null;

interface Entry {
  file: GuardFile;
  /** Case-folded: a case-insensitive file system opens .Claude/Settings.json as .claude/settings.json. */
  folded: string;
  segments: string[];
  folder: boolean;
}

const ENTRIES: Entry[] = GUARD_FILES.map((file) => {
  const folder = file.path.endsWith("/");
  const folded = (folder ? file.path.slice(0, -1) : file.path).toLowerCase();
  return { file, folded, segments: folded.split("/"), folder };
});

/**
 * Does a path hold a glob character? String search, like every test on the
 * hook's path here: a regular expression's first use in a process compiles
 * it (~40-100 µs each, measured), and a hook process uses each once.
 */
export const hasGlob = (s: string) => s.includes("*") || s.includes("?") || s.includes("[");

/** One glob segment as a matcher (* ? [..], case-folded), or the folded literal. */
function segmentMatcher(seg: string): (s: string) => boolean {
  if (!hasGlob(seg)) return (s) => s === seg;
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const close = seg.indexOf("]", i + 2);
      if (close === -1) re += "\\[";
      else {
        // A bracket expression matches one character: which one does not matter for a conservative answer.
        re += "[^/]";
        i = close;
      }
    } else re += c.replace(/[\\^$.|+(){}]/g, "\\$&");
  }
  const rx = new RegExp(`^${re}$`);
  return (s) => rx.test(s);
}

/**
 * Does the pattern (segments, `**` for any number of them) match all of
 * `target` (`exact`), only a leading part of it (`prefix`: the pattern names
 * a folder above it), or a path below it (`below`)?
 */
function compare(pattern: string[], target: string[]): { exact: boolean; prefix: boolean; below: boolean } {
  const out = { exact: false, prefix: false, below: false };
  const walk = (i: number, j: number) => {
    if (i === pattern.length) {
      if (j === target.length) out.exact = true;
      else if (j > 0) out.prefix = true;
      return;
    }
    if (pattern[i] === "**") {
      out.below = true; // a globstar reaches below anything it starts in
      for (let k = j; k <= target.length; k++) walk(i + 1, k);
      return;
    }
    if (j === target.length) {
      out.below = true;
      return;
    }
    if (segmentMatcher(pattern[i]!)(target[j]!)) walk(i + 1, j + 1);
  };
  walk(0, 0);
  return out;
}

/** The same comparison for any table of paths (the clients' user settings, guard-file-writes.ts). */
export const compareSegments = compare;

/** How a repository-relative path (normalized, "" for the root; globs allowed) stands to the guard's files. */
export function reachOf(rel: string): Reach {
  if (rel === "" || rel === ".") return null;
  if (!hasGlob(rel)) {
    // Callers pass normalized paths; a stray ./ or trailing / (a hand-written one) is dropped the long way.
    const odd = rel.startsWith("./") || rel.endsWith("/") || rel.includes("//") || rel.includes("/./");
    return reachOfLiteral(
      (odd
        ? rel
            .split("/")
            .filter((x) => x !== "" && x !== ".")
            .join("/")
        : rel
      ).toLowerCase(),
    );
  }
  const pattern = rel
    .toLowerCase()
    .split("/")
    .filter((s) => s !== "" && s !== ".");
  let holds: Reach = null;
  for (const e of ENTRIES) {
    const c = compare(pattern, e.segments);
    if (c.exact || (e.folder && c.below)) return { relation: "is", file: e.file };
    if (c.prefix && !holds) holds = { relation: "holds", file: e.file };
  }
  return holds;
}

/** reachOf for a path without glob characters: string comparisons only (every edit and shell write target pays this). */
function reachOfLiteral(p: string): Reach {
  let holds: Reach = null;
  for (const e of ENTRIES) {
    if (p === e.folded || (e.folder && p.startsWith(e.folded + "/"))) return { relation: "is", file: e.file };
    if (!holds && p !== "" && e.folded.startsWith(p + "/")) holds = { relation: "holds", file: e.file };
  }
  return holds;
}

/**
 * The guard file a script's text (a `node -e` one-liner, say) names: one
 * whose every segment appears in it, so that `join('.claude', 'settings.json')`
 * counts as much as the path itself. Null when it names none.
 */
export function namedGuardFile(text: string): GuardFile | null {
  const folded = text.toLowerCase();
  for (const e of ENTRIES) if (e.segments.every((p) => folded.includes(p))) return e.file;
  return null;
}
