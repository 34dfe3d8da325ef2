import { posix } from "node:path";
import type { Word } from "../shell/reader.js";
import {
  compareSegments,
  hasGlob,
  managedSection,
  namedGuardFile,
  reachOf,
  type GuardFile,
  type Reach,
} from "./guard-files.js";
import { userSettingsFiles } from "./host-settings.js";
import { applyUpdate, patchFiles } from "./patch.js";
import { shellWrites, type ShellWrites, type WriteMode } from "../shell/writes.js";
import { OWN_MCP_PREFIX, type ToolCall } from "./tools.js";

/**
 * Which of the guard's own files (guard-files.ts) a tool call would write,
 * move or delete: the edit tools' targets, an apply_patch's files, and what
 * a shell command visibly does to a path it names. Pure: the file system is
 * asked through the context (a symlink's real path, an instruction file's
 * text), so that the rules are tested with tables.
 *
 * The clients' user and machine settings (host-settings.ts: where a client
 * reads its hooks or the switch that turns them off, outside the checkout)
 * count as guard files when the context carries the hook's environment.
 *
 * What is not visible is out of reach here: a path built at run time
 * (base64, a variable set by an earlier command, a script file that writes
 * it, xargs fed from a pipe, a hard link made before). The wiring
 * fingerprint checked at session start, and the watch after the call, are
 * the backstop for those.
 */

export interface GuardWrite {
  /** The guard file, as named (repository-relative when it could be resolved). */
  path: string;
  /** `section`: an edit that changes the section init manages; `init`: the command that rewrites them all. */
  kind: "whole" | "section" | "init";
}

export interface WriteContext {
  /** The tool's working directory and the checkout root, absolute. */
  cwd: string;
  root: string;
  /** The real path of an absolute path, symlinks followed (a missing tail kept as written); null when unknown. */
  realpath?: (abs: string) => string | null;
  /** The checkout's real root, for the real paths (asked only when a real path is). */
  realRoot?: () => string | null;
  /** An instruction file's current text (repository-relative path), null when there is none. */
  readFile?: (rel: string) => string | null;
  /** The hook's environment, to place the clients' user settings (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME …); without it they are not looked at. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A shell command's writes as the reader already read them (with this cwd, root and HOME): the reader runs once a call. */
  shell?: ShellWrites;
}

/** A path without its trailing slashes (the root "/" stays). */
function trimSlash(p: string): string {
  let end = p.length;
  while (end > 1 && p[end - 1] === "/") end--;
  return p.slice(0, end);
}

/** The repository-relative form of an absolute path, case-folded against the root; null outside it. */
function relativeTo(abs: string, root: string): string | null {
  const a = abs.toLowerCase();
  const r = trimSlash(root.toLowerCase());
  if (a === r) return "";
  return a.startsWith(r + "/") ? abs.slice(r.length + 1) : null;
}

// ---------------------------------------------------------------------------------------------
// The clients' user and machine settings (host-settings.ts), absolute paths outside the checkout

interface HostEntry {
  file: GuardFile;
  /** Case-folded, without the trailing slash of a folder. */
  folded: string;
  segments: string[];
  folder: boolean;
  /** Words a one-liner's text must all hold to name it (see hostMarks). */
  marks: string[][];
}

/** The variables that move a client's folder: a one-liner naming one and a file under it names that file. */
const HOST_VARIABLES = [
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "COPILOT_HOME",
  "GEMINI_CLI_HOME",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_CONFIG",
  "XDG_CONFIG_HOME",
  "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
  "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
  "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
];

/**
 * How a one-liner's text names a settings file: the path from its last
 * dot-folder on (`.copilot`, `hooks`), each word anywhere in the text as
 * for the checkout's files; a path without one (/etc/codex) as written;
 * and the variable that moves it with the rest (`CLAUDE_CONFIG_DIR`,
 * `settings.json`).
 */
function hostMarks(folded: string, env: Readonly<Record<string, string | undefined>>): string[][] {
  const segments = folded.split("/").filter((s) => s !== "");
  let dot = -1;
  for (let i = 0; i < segments.length; i++) if (segments[i]!.startsWith(".")) dot = i;
  const marks = [dot === -1 ? [folded] : segments.slice(dot)];
  for (const name of HOST_VARIABLES) {
    const v = env[name]?.replace(/\/+$/, "").toLowerCase();
    if (v?.startsWith("/") && (folded === v || folded.startsWith(v + "/")))
      marks.push([
        name.toLowerCase(),
        ...folded
          .slice(v.length)
          .split("/")
          .filter((s) => s !== ""),
      ]);
  }
  return marks;
}

const hostCache = new WeakMap<object, HostEntry[]>();

/** The settings files of the context's environment, prepared once per environment. */
function hostEntries(ctx: WriteContext): HostEntry[] {
  const env = ctx.env;
  if (!env) return [];
  let entries = hostCache.get(env);
  if (!entries) {
    entries = userSettingsFiles(env).map((path) => {
      const folder = path.endsWith("/");
      const folded = (folder ? path.slice(0, -1) : path).toLowerCase();
      const segments = folded.split("/").filter((s) => s !== "");
      return { file: { path, kind: "whole" }, folded, segments, folder, marks: hostMarks(folded, env) };
    });
    hostCache.set(env, entries);
  }
  return entries;
}

/** How an absolute path (globs allowed) stands to the settings files: `is` one or lies in one's folder, or `holds` one. */
function hostReach(abs: string, ctx: WriteContext): Reach {
  const entries = hostEntries(ctx);
  if (entries.length === 0) return null;
  const a = trimSlash(abs).toLowerCase();
  const glob = hasGlob(a) ? a.split("/").filter((s) => s !== "" && s !== ".") : null;
  const above = a === "/" ? "/" : a + "/";
  let holds: Reach = null;
  for (const e of entries) {
    if (glob) {
      const c = compareSegments(glob, e.segments);
      if (c.exact || (e.folder && c.below)) return { relation: "is", file: e.file };
      if (c.prefix && !holds) holds = { relation: "holds", file: e.file };
      continue;
    }
    if (a === e.folded || (e.folder && a.startsWith(e.folded + "/"))) return { relation: "is", file: e.file };
    if (!holds && e.folded.startsWith(above)) holds = { relation: "holds", file: e.file };
  }
  return holds;
}

/**
 * A word whose start the shell expands at run time ($X/.copilot/hooks/a.json):
 * does a trailing run of at least two of its visible segments place it in a
 * settings file (`is`), or name a folder above one (`holds`)? One segment
 * (`$OUT/settings.json`) says too little to refuse.
 */
function hostTail(segments: string[], ctx: WriteContext): Reach {
  const entries = hostEntries(ctx);
  const folded = segments.map((s) => s.toLowerCase());
  let holds: Reach = null;
  for (let k = 0; k + 2 <= folded.length; k++) {
    const tail = folded.slice(k);
    for (const e of entries) {
      // The tail's first j segments are e's segments i .. i+j-1.
      for (let i = 0; i + 2 <= e.segments.length; i++) {
        const j = Math.min(tail.length, e.segments.length - i);
        if (j < 2 || !tail.slice(0, j).every((s, n) => s === e.segments[i + n])) continue;
        const reachesEnd = i + j === e.segments.length;
        if (reachesEnd && (tail.length === j || e.folder)) return { relation: "is", file: e.file };
        if (!reachesEnd && tail.length === j && !holds) holds = { relation: "holds", file: e.file };
      }
    }
  }
  return holds;
}

/** The settings file a one-liner's text names, by hostMarks; null when it names none. */
function namedHostFile(text: string, ctx: WriteContext): GuardFile | null {
  const entries = hostEntries(ctx);
  if (entries.length === 0) return null;
  const folded = text.toLowerCase();
  for (const e of entries) if (e.marks.some((m) => m.every((w) => folded.includes(w)))) return e.file;
  return null;
}

/** `~` and `~/…` as the shell expands them, with the environment's HOME; null for any other word. */
function tildePath(text: string, ctx: WriteContext): string | null {
  const home = ctx.env?.HOME;
  if (!home?.startsWith("/") || !(text === "~" || text.startsWith("~/"))) return null;
  return posix.join(home, text.slice(1));
}

// ---------------------------------------------------------------------------------------------

/** How a path, as a tool names it, stands to the guard files: textually, then by its real path. */
function reachOfPath(
  abs: string,
  ctx: WriteContext,
): { rel: string | null; reach: Reach; aboveRoot: boolean } {
  const rel = relativeTo(abs, ctx.root);
  const reach = rel === null ? null : reachOf(rel);
  if (reach) return { rel, reach, aboveRoot: false };
  const aboveRoot =
    rel === null && (ctx.root.toLowerCase() + "/").startsWith(trimSlash(abs.toLowerCase()) + "/");
  // A client's user or machine settings, named as they are: reported by the absolute path.
  const host = hostReach(abs, ctx);
  if (host) return { rel: trimSlash(abs), reach: host, aboveRoot };
  // A symlink (or a folder reached through one) whose real path is a guard file: one realpath, only for a path that is no guard file by name.
  if (!hasGlob(abs) && ctx.realpath && ctx.realRoot) {
    const real = ctx.realpath(abs);
    // The root's own real path only when the target's is not under the root as named (one realpath saved on most calls).
    const textual = real === null ? null : relativeTo(real, ctx.root);
    const realRoot = real === null || textual !== null ? null : ctx.realRoot();
    const realRel = textual ?? (real === null || realRoot === null ? null : relativeTo(real, realRoot));
    const realReach = realRel === null ? null : reachOf(realRel);
    if (realReach) return { rel: realRel, reach: realReach, aboveRoot };
    const realHost = real === null || real === abs ? null : hostReach(real, ctx);
    if (realHost) return { rel: trimSlash(real!), reach: realHost, aboveRoot };
  }
  return { rel, reach: null, aboveRoot };
}

// ---------------------------------------------------------------------------------------------
// Edit tools

type Input = Record<string, unknown>;

/** An instruction file's new text after this edit; undefined when the edit cannot be read (refused), null when it deletes it. */
function editedText(
  tool: string,
  input: Input,
  same: (patchPath: string) => boolean,
  current: string | null,
): string | null | undefined {
  if (tool === "Write") return typeof input.content === "string" ? input.content : undefined;
  const replace = (text: string, e: Input): string | null => {
    const from = e.old_string;
    const to = e.new_string;
    if (typeof from !== "string" || typeof to !== "string" || from === "" || !text.includes(from))
      return null;
    return e.replace_all === true ? text.split(from).join(to) : text.replace(from, () => to);
  };
  if (tool === "Edit") {
    if (current === null) return current; // the tool fails: nothing to edit
    return replace(current, input) ?? current; // an old_string that is not there: the tool fails
  }
  if (tool === "MultiEdit") {
    if (current === null || !Array.isArray(input.edits)) return current;
    let text = current;
    for (const e of input.edits as Input[]) {
      const next = e && typeof e === "object" ? replace(text, e) : null;
      if (next === null) return current; // one edit fails, the whole call fails
      text = next;
    }
    return text;
  }
  if (tool === "apply_patch") {
    const body = [input.command, input.input, input.patch].find((v) => typeof v === "string") as string;
    let text: string | null | undefined = current;
    for (const f of patchFiles(body ?? "")) {
      if (f.moveTo !== null && (same(f.moveTo) || same(f.path))) return undefined; // a move onto or off it: refused
      if (!same(f.path)) continue;
      if (f.op === "delete") text = null;
      else if (f.op === "add") text = f.lines.map((l) => l.slice(1)).join("\n") + "\n";
      else text = text === null || text === undefined ? undefined : (applyUpdate(text, f.lines) ?? undefined);
    }
    return text;
  }
  return undefined; // NotebookEdit and anything else: not an edit of an instruction file this can read
}

/** The patch text of an apply_patch call, through the tool or a shell. */
function patchInput(tool: string, input: Input, call: ToolCall): Input {
  return tool === "apply_patch" ? input : { command: call.command ?? "" };
}

function editWrites(tool: string, input: Input, call: ToolCall, ctx: WriteContext): GuardWrite[] {
  const out: GuardWrite[] = [];
  const viaPatch = tool === "apply_patch" || call.command !== null;
  for (const t of call.targets ?? []) {
    const { rel, reach } = reachOfPath(tildePath(t, ctx) ?? posix.resolve(ctx.cwd, t), ctx);
    if (reach?.relation !== "is") continue;
    const path = rel ?? t;
    if (reach.file.kind === "whole") {
      out.push({ path, kind: "whole" });
      continue;
    }
    // An instruction file: refused only when the managed section would change or go.
    const current = ctx.readFile?.(path) ?? null;
    // A patch names its files from the cwd, as this target was named (or, through a link, as the file really is).
    const named = posix.resolve(ctx.cwd, t).toLowerCase();
    const same = (p: string) => {
      const abs = posix.resolve(ctx.cwd, p);
      return abs.toLowerCase() === named || relativeTo(abs, ctx.root)?.toLowerCase() === path.toLowerCase();
    };
    const next = viaPatch
      ? editedText("apply_patch", patchInput(tool, input, call), same, current)
      : editedText(tool, input, same, current);
    if (next === undefined || managedSection(next) !== managedSection(current))
      out.push({ path, kind: "section" });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shell commands

type Mode = WriteMode;

interface Ctx extends WriteContext {
  out: GuardWrite[];
}

/**
 * Records the guard file a word names in `mode`. A word the shell expands at
 * run time ($CLAUDE_PROJECT_DIR/.claude/settings.json, ~/…), or one whose
 * directory is unknown (after a `cd $X`), is read by its visible tail: any
 * trailing run of its segments that is a guard path counts.
 */
function checkWord(word: Word, cwd: string | null, mode: Mode, c: Ctx): void {
  const text = word.text;
  if (text === "" && !word.dynamic) return;
  const hit = (path: string, file: GuardFile) => {
    // Appending to an instruction file leaves its managed section as it is.
    if (file.kind !== "section" || mode !== "append") c.out.push({ path, kind: file.kind });
  };
  let abs: string;
  if (word.dynamic || cwd === null) {
    const segments = text.split("/").filter((s) => s !== "" && s !== ".");
    for (let k = 0; k < segments.length; k++) {
      const tail = segments.slice(k).join("/");
      const reach = reachOf(tail);
      if (reach?.relation === "is" || (reach && mode !== "write" && mode !== "append"))
        return hit(tail, reach.file);
    }
    // The clients' user settings by at least two trailing segments.
    const host = hostTail(segments, c);
    if (host?.relation === "is" || (host && mode !== "write" && mode !== "append"))
      return hit(text, host.file);
    // `~/…` names a place the environment knows.
    const home = word.dynamic ? tildePath(text, c) : null;
    if (home === null) return;
    abs = home;
  } else abs = posix.resolve(cwd, text);
  const { rel, reach, aboveRoot } = reachOfPath(abs, c);
  if (reach?.relation === "is") return hit(rel ?? text, reach.file);
  if (reach?.relation === "holds" && (mode === "remove" || mode === "tree"))
    return hit(rel ?? text, reach.file);
  if (mode === "remove" && (rel === "" || aboveRoot))
    c.out.push({ path: rel === "" ? "." : text, kind: "whole" });
}

/**
 * The guard files a shell command writes, through the one shell reader
 * (shell/writes.ts). Fail-closed: every target counts, the uncertain ones
 * (an unknown program's operand, a one-liner's path) as much as the named;
 * a known reader names none. Text the reader could not follow word by word
 * (a one-liner's script, a line nested too deep or too long) is refused when it names a
 * guard file at all, `join('.claude', 'settings.json')` included.
 */
function shellGuardWrites(command: string, ctx: WriteContext): GuardWrite[] {
  const c: Ctx = { ...ctx, out: [] };
  // `~` and $HOME as the hook's home: a write to the user's settings through them is named (host-settings.ts).
  const writes = ctx.shell ?? shellWrites(command, ctx.cwd, ctx.root, { home: ctx.env?.HOME ?? null });
  if (writes.init) c.out.push({ path: ".cohent/", kind: "init" });
  for (const text of writes.opaque) {
    const file = namedGuardFile(text) ?? namedHostFile(text, ctx);
    if (file) c.out.push({ path: file.path, kind: file.kind });
  }
  for (const t of writes.targets)
    checkWord({ text: t.text, dynamic: t.dynamic, assign: false }, t.cwd, t.mode, c);
  // One file named twice (by a target and by a script's text) is one refusal.
  return c.out.filter((w, i) => c.out.findIndex((x) => x.path === w.path && x.kind === w.kind) === i);
}

// ---------------------------------------------------------------------------------------------
// MCP tools of other servers (a filesystem server's write_file, move_file …)

const MCP_WRITE = /write|edit|create|move|rename|delete|remove|patch|replace|append|upload|save|mkdir|chmod/i;

function mcpWrites(tool: string, input: Input, ctx: WriteContext): GuardWrite[] {
  const name = tool.split("__").slice(2).join("__");
  if (!MCP_WRITE.test(name)) return [];
  const out: GuardWrite[] = [];
  const strings = Object.values(input).flatMap((v) =>
    typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [],
  );
  for (const s of strings) {
    if (s.length > 4096 || s.includes("\n")) continue; // contents, not paths
    const { rel, reach } = reachOfPath(tildePath(s, ctx) ?? posix.resolve(ctx.cwd, s), ctx);
    if (reach) out.push({ path: rel ?? s, kind: reach.file.kind });
  }
  return out;
}

/** The guard files this tool call would write, move or delete; empty for every other call. */
export function guardFileWrites(
  tool: string,
  input: Input | undefined,
  call: ToolCall,
  ctx: WriteContext,
): GuardWrite[] {
  const args = input && typeof input === "object" ? input : {};
  if (call.kind === "edit") return editWrites(tool, args, call, ctx);
  if (call.kind !== "shell") return [];
  if (call.command !== null) return shellGuardWrites(call.command, ctx);
  if (tool.startsWith("mcp__") && !tool.startsWith(OWN_MCP_PREFIX)) return mcpWrites(tool, args, ctx);
  return [];
}
