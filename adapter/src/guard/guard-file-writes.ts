import { posix } from "node:path";
import { gitSubcommand, unwrapCommand } from "../git/classify.js";
import { simpleCommands, type Word } from "../git/shell.js";
import { hasGlob, managedSection, namedGuardFile, reachOf, type GuardFile } from "./guard-files.js";
import { applyUpdate, patchFiles } from "./patch.js";
import { OWN_MCP_PREFIX, type ToolCall } from "./tools.js";

/**
 * Which of the guard's own files (guard-files.ts) a tool call would write,
 * move or delete: the edit tools' targets, an apply_patch's files, and what
 * a shell command visibly does to a path it names. Pure: the file system is
 * asked through the context (a symlink's real path, an instruction file's
 * text), so that the rules are tested with tables.
 *
 * What is not visible is out of reach here: a path built at run time
 * (base64, a variable set by an earlier command, a script file that writes
 * it, xargs fed from a pipe, a hard link made before). The wiring
 * fingerprint checked at session start is the backstop for those.
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

/** How a path, as a tool names it, stands to the guard files: textually, then by its real path. */
function reachOfPath(
  abs: string,
  ctx: WriteContext,
): { rel: string | null; reach: ReturnType<typeof reachOf>; aboveRoot: boolean } {
  const rel = relativeTo(abs, ctx.root);
  const reach = rel === null ? null : reachOf(rel);
  if (reach) return { rel, reach, aboveRoot: false };
  const aboveRoot =
    rel === null && (ctx.root.toLowerCase() + "/").startsWith(trimSlash(abs.toLowerCase()) + "/");
  // A symlink (or a folder reached through one) whose real path is a guard file: one realpath, only for a path that is no guard file by name.
  if (!hasGlob(abs) && ctx.realpath && ctx.realRoot) {
    const real = ctx.realpath(abs);
    // The root's own real path only when the target's is not under the root as named (one realpath saved on most calls).
    const textual = real === null ? null : relativeTo(real, ctx.root);
    const realRoot = real === null || textual !== null ? null : ctx.realRoot();
    const realRel = textual ?? (real === null || realRoot === null ? null : relativeTo(real, realRoot));
    const realReach = realRel === null ? null : reachOf(realRel);
    if (realReach) return { rel: realRel, reach: realReach, aboveRoot };
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
    const { rel, reach } = reachOfPath(posix.resolve(ctx.cwd, t), ctx);
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

/** What a command does to a path it names. */
type Mode =
  /** writes it (a redirect, tee, sed -i …); appending leaves an instruction file's section as it is */
  | "write"
  | "append"
  /** removes or moves it away, folders above it included, the checkout itself too */
  | "remove"
  /** changes it or a folder above it (chmod, git checkout --), the checkout root excepted */
  | "tree";

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
  if (word.dynamic || cwd === null) {
    const segments = text.split("/").filter((s) => s !== "" && s !== ".");
    for (let k = 0; k < segments.length; k++) {
      const tail = segments.slice(k).join("/");
      const reach = reachOf(tail);
      if (reach?.relation === "is" || (reach && mode !== "write" && mode !== "append"))
        return hit(tail, reach.file);
    }
    return;
  }
  const abs = posix.resolve(cwd, text);
  const { rel, reach, aboveRoot } = reachOfPath(abs, c);
  if (reach?.relation === "is") return hit(rel ?? text, reach.file);
  if (reach?.relation === "holds" && (mode === "remove" || mode === "tree"))
    return hit(rel ?? text, reach.file);
  if (mode === "remove" && (rel === "" || aboveRoot))
    c.out.push({ path: rel === "" ? "." : text, kind: "whole" });
}

/** The words of a command that are operands, not options; `withValue` lists the options whose value is the next word. */
function operands(words: Word[], withValue: ReadonlySet<string> = new Set()): Word[] {
  const out: Word[] = [];
  let dashes = false;
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.text;
    if (dashes || words[i]!.dynamic || !t.startsWith("-") || t === "-") out.push(words[i]!);
    else if (t === "--") dashes = true;
    else if (withValue.has(t)) i++;
  }
  return out;
}

/** The value of an option (-t DIR, -tDIR, -vt DIR, --target-directory=DIR, --target-directory DIR); undefined when absent. */
function optionValue(words: Word[], short: string | null, long: string | null): Word | undefined {
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.text;
    if (t === "--") return undefined;
    if (long && t === `--${long}`) return words[i + 1];
    if (long && t.startsWith(`--${long}=`)) return { ...words[i]!, text: t.slice(long.length + 3) };
    // A short option, alone or last in a cluster (-t DIR, -sSo FILE), or with its value attached (-tDIR).
    const k = short && t.length > 1 && t[0] === "-" && t[1] !== "-" ? t.indexOf(short) : -1;
    if (k > 0) return k === t.length - 1 ? words[i + 1] : { ...words[i]!, text: t.slice(k + 1) };
  }
  return undefined;
}

const has = (words: Word[], ...flags: string[]) => words.some((w) => flags.includes(w.text));
const join = (dir: Word, name: string): Word => ({
  ...dir,
  text: `${trimSlash(dir.text)}/${name}`,
});

/**
 * cp, mv, install, ln, rsync: what lands at the destination. The
 * destination itself when it is a guard file (or, with -T, a folder above
 * one), and DEST/<name> of each source (`cp -r evil/.claude .`).
 */
function destination(
  args: Word[],
  cwd: string | null,
  c: Ctx,
  withValue: ReadonlySet<string>,
  targetFlag: "t" | null = "t",
): Word[] {
  // -t DIR names the destination folder (cp, mv, install, ln); rsync's -t is its times.
  const target = optionValue(args, targetFlag, "target-directory");
  const ops = operands(args, withValue);
  const dest = target ?? ops[ops.length - 1];
  const sources = target ? ops : ops.slice(0, -1);
  if (!dest || sources.length === 0) return [];
  checkWord(dest, cwd, has(args, "-T", "--no-target-directory") ? "remove" : "write", c);
  for (const s of sources) {
    const name = posix.basename(s.text);
    if (name && name !== "." && name !== "..") checkWord(join(dest, name), cwd, "remove", c);
  }
  return sources;
}

const CP_VALUES = new Set(["-S", "--suffix", "-t", "--target-directory"]);
const INSTALL_VALUES = new Set([...CP_VALUES, "-m", "--mode", "-o", "--owner", "-g", "--group"]);
const RSYNC_VALUES = new Set(["-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T", "--temp-dir"]);
const TRUNCATE_VALUES = new Set(["-s", "--size", "-r", "--reference"]);
const PATCH_VALUES = new Set(["-i", "--input", "-p", "-B", "-D", "-F", "-z", "-V", "-r"]);
/** Programs that run the text of a word (node -e, python -c, perl -e, deno eval …); versions dropped (python3.12). */
const INTERPRETERS = new Set(
  "node nodejs bun deno python pypy perl ruby php osascript pwsh powershell lua Rscript sh bash zsh dash ksh fish".split(
    " ",
  ),
);
const AWKS = new Set(["awk", "gawk", "mawk", "nawk"]);
const EDITORS = new Set("ed ex vi vim nvim nano pico emacs joe micro".split(" "));
const PERMISSIONS = new Set(["chmod", "chown", "chgrp", "chattr", "setfacl", "chflags"]);
const FIND_ACTIONS = new Set([
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprintf",
  "-fls",
]);

/** A program's name without a trailing version (python3.12 -> python). */
function unversioned(name: string): string {
  let end = name.length;
  while (end > 1 && ((name[end - 1]! >= "0" && name[end - 1]! <= "9") || name[end - 1] === ".")) end--;
  return name.slice(0, end);
}

const isLetter = (c: string | undefined) => !!c && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));

/** A cluster of short options (-pi, -lc): its letters, or null for anything else. */
function shortCluster(t: string): string | null {
  if (t.length < 2 || t[0] !== "-" || t[1] === "-") return null;
  let end = 1;
  while (isLetter(t[end])) end++;
  return t.slice(1, end);
}

/** -e, -c, -p, -r (php), their clusters (-pe, -lc), --eval, --print, -Command, `deno eval`. */
function isEvalFlag(t: string): boolean {
  if (t === "eval" || t === "-Command" || t === "-command") return true;
  if (t === "--eval" || t === "--print" || t.startsWith("--eval=") || t.startsWith("--print=")) return true;
  const letters = shortCluster(t);
  return !!letters && letters.length === t.length - 1 && "ecpr".includes(letters[letters.length - 1]!);
}

/** sed -i, -i.bak, -ni; perl -pi; --in-place. */
function isInPlace(t: string): boolean {
  return t.startsWith("--in-place") || !!shortCluster(t)?.includes("i");
}

/**
 * An interpreter's one-liner: its script text and the words after it (the
 * script's arguments: `python -c "…open(sys.argv[1],'w')…" .claude/…`), or
 * null when it runs a script file (the first plain word before any eval flag).
 */
function oneLiner(name: string, args: Word[]): Word[] | null {
  if (AWKS.has(name)) {
    // The program is the first operand (none with -f): the files after it are read.
    const program = operands(args, new Set(["-F", "-v", "-f", "--field-separator", "--assign"]))[0];
    return program && !has(args, "-f", "--file") ? [program] : null;
  }
  if (!INTERPRETERS.has(unversioned(name))) return null;
  for (let i = 0; i < args.length; i++) {
    if (isEvalFlag(args[i]!.text)) return args.slice(i);
    if (!args[i]!.text.startsWith("-")) return null;
  }
  return null;
}

/** `node …/cohent.mjs init`, `npx cohent init`, `cohent init`: init rewrites every guard file, and a person runs it. */
function runsInit(prog: string, args: Word[]): boolean {
  const words = args.map((w) => w.text);
  const afterOptions = (from: number) => {
    let i = from;
    while (i < words.length && words[i]!.startsWith("-")) i++;
    return i;
  };
  if (prog === "node" || prog === "nodejs" || prog === "bun") {
    const i = words.findIndex((w) => {
      const base = posix.basename(w);
      return base === "cohent.mjs" || base === "cohent.cjs" || base === "cohent.js";
    });
    return i !== -1 && words[i + 1] === "init";
  }
  if (prog === "cohent") return words[afterOptions(0)] === "init";
  const runner =
    prog === "npx" || prog === "pnpx" || prog === "bunx"
      ? 0
      : (prog === "npm" || prog === "pnpm" || prog === "yarn") &&
          ["exec", "dlx", "x"].includes(words[0] ?? "")
        ? 1
        : -1;
  if (runner === -1) return false;
  let i = afterOptions(runner);
  if (words[i] === "--") i++;
  const pkg = words[i] ?? "";
  if (pkg !== "cohent" && !pkg.startsWith("cohent@")) return false;
  const j = words[i + 1] === "--" ? i + 2 : i + 1;
  return words[j] === "init";
}

function commandWrites(words: Word[], cwd: string | null, c: Ctx): void {
  const unwrapped = unwrapCommand(words).words;
  const prog = unwrapped[0];
  if (!prog) return;
  const name = posix.basename(prog.text);
  const args = unwrapped.slice(1);
  if (runsInit(name, args)) {
    c.out.push({ path: ".cohent/", kind: "init" });
    return;
  }
  const each = (list: Word[], mode: Mode) => {
    for (const w of list) checkWord(w, cwd, mode, c);
  };
  // A one-liner whose text names a guard file: what it does with it cannot be read, so it is refused.
  for (const w of oneLiner(name, args) ?? []) {
    const file = namedGuardFile(w.text);
    if (file) return void c.out.push({ path: file.path, kind: file.kind });
  }
  switch (name) {
    case "rm":
    case "rmdir":
    case "unlink":
    case "shred":
    case "srm":
      return each(operands(args), "remove");
    case "truncate":
      return each(operands(args, TRUNCATE_VALUES), "write");
    case "tee":
      return each(operands(args), has(args, "-a", "--append") ? "append" : "write");
    case "mv":
      return each(destination(args, cwd, c, CP_VALUES), "remove");
    case "cp":
      destination(args, cwd, c, CP_VALUES);
      return;
    case "rsync":
      destination(args, cwd, c, RSYNC_VALUES, null);
      return;
    case "install":
      destination(args, cwd, c, INSTALL_VALUES);
      return;
    case "ln":
      // A link onto a guard file, or to one: a hard link would be a second name to write it through.
      return each(destination(args, cwd, c, CP_VALUES), "write");
    case "sed":
    case "perl":
    case "ruby":
      if (args.some((w) => isInPlace(w.text)))
        each(operands(args, new Set(["-e", "-f", "--expression", "--file", "-E"])), "write");
      return;
    case "dd":
      for (const w of args)
        if (w.text.startsWith("of=")) checkWord({ ...w, text: w.text.slice(3) }, cwd, "write", c);
      return;
    case "patch": {
      const out = optionValue(args, "o", "output");
      if (out) checkWord(out, cwd, "write", c);
      return each(operands(args, PATCH_VALUES).slice(0, 1), "write");
    }
    case "curl":
    case "wget": {
      const out =
        name === "curl" ? optionValue(args, "o", "output") : optionValue(args, "O", "output-document");
      if (out) checkWord(out, cwd, "write", c);
      return;
    }
    case "find":
      // find … -delete / -exec …: its starting points are what it may change.
      if (args.some((w) => FIND_ACTIONS.has(w.text))) {
        const starts: Word[] = [];
        for (const w of args) {
          if (w.text === "-H" || w.text === "-L" || w.text === "-P") continue;
          if (w.text.startsWith("-") || w.text === "(" || w.text === "!") break;
          starts.push(w);
        }
        each(starts, "tree");
      }
      return;
    case "git":
      return gitWrites(args, cwd, c);
    case "prettier":
      if (has(args, "--write", "-w")) each(operands(args), "write");
      return;
  }
  if (EDITORS.has(name)) return each(operands(args), "write");
  if (PERMISSIONS.has(name)) return each(operands(args, new Set(["--reference"])), "tree");
}

/**
 * git rm and mv remove what they name; checkout, restore, stash push and
 * clean put back or drop what they name (`git checkout -- .claude/settings.json`
 * undoes a person's uncommitted `init --upgrade`). Without a path they are
 * left alone: a branch switch or a whole stash is ordinary work, and the
 * fingerprint sees what it did to the wiring.
 */
function gitWrites(args: Word[], cwd: string | null, c: Ctx): void {
  const git = gitSubcommand(args, cwd);
  if (!git) return;
  const { sub, rest, cwd: dir } = git;
  const each = (list: Word[], mode: Mode) => {
    for (const w of list) checkWord(w, dir, mode, c);
  };
  if (sub === "rm") return each(operands(rest), "remove");
  if (sub === "mv") return each(destination(rest, dir, c, new Set()), "remove");
  // stash list, show, pop, apply, drop …: they name no path.
  const verb = rest[0]?.text;
  if (sub === "stash" && verb && !verb.startsWith("-") && verb !== "push" && verb !== "save") return;
  if (sub === "checkout" || sub === "restore" || sub === "stash" || sub === "clean")
    each(
      operands(rest, new Set(["-m", "--message", "-s", "--source", "-b", "-B", "-e", "--exclude"])),
      "tree",
    );
}

function shellWrites(command: string, ctx: WriteContext): GuardWrite[] {
  const c: Ctx = { ...ctx, out: [] };
  for (const cmd of simpleCommands(command, ctx.cwd)) {
    if (cmd.unread !== undefined) {
      const file = namedGuardFile(cmd.unread);
      if (file) c.out.push({ path: file.path, kind: file.kind });
      continue;
    }
    for (const r of cmd.redirects) {
      if (r.op === "<" || r.op === "<&" || r.op === "<<<") continue;
      checkWord(r.target, cmd.cwd, r.op === ">>" || r.op === "&>>" ? "append" : "write", c);
    }
    if (cmd.words.length) commandWrites(cmd.words, cmd.cwd, c);
  }
  return c.out;
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
    const { rel, reach } = reachOfPath(posix.resolve(ctx.cwd, s), ctx);
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
  if (call.command !== null) return shellWrites(call.command, ctx);
  if (tool.startsWith("mcp__") && !tool.startsWith(OWN_MCP_PREFIX)) return mcpWrites(tool, args, ctx);
  return [];
}
