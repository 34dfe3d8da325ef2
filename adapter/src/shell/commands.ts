import { posix } from "node:path";
import type { Word } from "./reader.js";
import { positionalVars, type Vars } from "./expand.js";
import { tarExtract } from "./outputs.js";
import { readLiterals } from "./literals.js";
import { awkScript, recordScript } from "./scripts.js";
import * as P from "./programs.js";
import { awkWrites, diffPaths, literalPaths, scriptLiterals, scriptOnlyReads } from "./texts.js";
export { git } from "./git.js";
import type { ShellTarget, WriteMode } from "./writes.js";

/**
 * The programs shell/writes.ts reads beyond a table row: copies, formatters,
 * shells and interpreters, package runners, patch, find, Git, go and tar.
 * Each takes the reader (to record targets and read nested scripts) and
 * says whether the program only reads.
 */

type Certainty = ShellTarget["certainty"];

/** What these programs ask of the reader (shell/writes.ts Reader). */
export interface Reader {
  readonly command: string;
  readonly root: string;
  opaque: string[];
  /** It runs the project's own code (a test run): it names no write, but what that code writes is its own. */
  runsCode: boolean;
  /** The running command's standard input, when the line shows it (a pipe from `echo`, a here-string); else null. */
  stdin: string | null;
  /** The line's variables where the running command stands (what a script it runs sees). */
  vars: Vars;
  add(w: Word, cwd: string | null, mode: WriteMode, certainty?: Certainty): void;
  each(list: Word[], cwd: string | null, mode: WriteMode, certainty?: Certainty): false;
  unreadText(text: string, cwd: string | null): false;
  /** The command's here-document bodies (what a program reading its standard input may read). */
  heredocs(): string[];
  line(src: string, cwd: string | null, depth: number): boolean;
  run(words: Word[], cwd: string | null, depth: number): boolean;
}

/** Nesting of shells, runners and find -exec read through (the shell reader has its own, for sh -c and $( )). */
export const MAX_DEPTH = 4;
const DOT = P.word(".");

/**
 * cp, mv, install, ln, rsync, scp: what lands at the destination. The
 * destination itself (replaced with -T), and DEST/<name> of each source
 * (`cp -r evil/.claude .`): named when DEST is surely a folder.
 */
export function destination(
  r: Reader,
  args: Word[],
  cwd: string | null,
  withValue: ReadonlySet<string>,
  targetFlag: "t" | null = "t",
): Word[] {
  // -t DIR names the destination folder (cp, mv, install, ln); rsync's -t is its times.
  const target = P.optionValue(args, targetFlag, "target-directory");
  const ops = P.operands(args, withValue);
  const dest = target ?? ops[ops.length - 1];
  const sources = target ? ops : ops.slice(0, -1);
  // host:path is another machine's (rsync, scp).
  const colon = dest?.text.indexOf(":") ?? -1;
  const remote = !!dest && !dest.dynamic && colon > 0 && !dest.text.slice(0, colon).includes("/");
  if (!dest || sources.length === 0 || remote) return sources;
  const t = dest.text;
  const named = (s: Word) => {
    const name = posix.basename(s.text);
    return name && name !== "." && name !== ".." ? name : null;
  };
  const replaced = args.some(
    (w) =>
      w.text === "--no-target-directory" || (targetFlag !== null && !!P.shortCluster(w.text)?.includes("T")),
  );
  const folder = !replaced && (!!target || sources.length > 1 || t.endsWith("/") || t === "." || t === "..");
  // A folder destination is written only below it, at each source's name (unless a source has none: `cp -r . dir/`).
  if (!folder || sources.some((s) => !named(s))) r.add(dest, cwd, replaced ? "remove" : "write");
  for (const s of replaced ? [] : sources) {
    const name = named(s);
    const at = {
      ...dest,
      text: `${t.endsWith("/") ? t.slice(0, -1) : t}/${name}`,
      dynamic: dest.dynamic || s.dynamic,
    };
    if (name) r.add(at, cwd, "remove", folder ? "named" : "uncertain");
  }
  return sources;
}

export function permissions(r: Reader, args: Word[], cwd: string | null): false {
  const rest: Word[] = [];
  let reference = false;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "--reference") {
      reference = true;
      i++;
    } else if (t.startsWith("--reference=")) reference = true;
    else if (!P.PERMISSION_FLAGS.has(t)) rest.push(args[i]!);
  }
  // The first other word is the mode or owner (chmod -x f, chown me f), unless --reference gave it.
  r.each(reference ? rest : rest.slice(1), cwd, "tree");
  return false;
}

/** Formatters and fixers: their operands (the current folder without any) in tree mode; null for other programs. */
export function formatter(r: Reader, name: string, args: Word[], cwd: string | null): boolean | null {
  let ops: Word[] | null = null;
  if (name === "prettier" && P.has(args, "--write", "-w")) ops = P.operands(args, P.PRETTIER_VALUES);
  else if (name === "eslint") {
    const out = P.optionValue(args, "o", "output-file");
    if (out) r.add(out, cwd, "write");
    if (P.has(args, "--fix")) ops = P.operands(args, P.ESLINT_VALUES);
    else return !out;
  } else if (
    (name === "black" || name === "isort") &&
    !P.has(args, "--check", "--diff", "--check-only", "-c")
  )
    ops = P.operands(args, P.BLACK_VALUES);
  else if (name === "ruff") {
    const sub = args[0] && !args[0].text.startsWith("-") ? args[0].text : "check";
    const rest = args[0]?.text === sub ? args.slice(1) : args;
    const writes =
      sub === "format" ? !P.has(rest, "--check", "--diff") : P.has(rest, "--fix", "--unsafe-fixes");
    if (writes) ops = P.operands(rest, P.BLACK_VALUES);
  } else if (name === "gofmt" && P.has(args, "-w")) ops = P.operands(args);
  else if (
    (name === "clang-format" && P.has(args, "-i")) ||
    (name === "autopep8" && P.has(args, "-i", "--in-place"))
  ) {
    r.each(P.operands(args), cwd, "write");
    return false;
  } else if (name === "rustfmt" && !P.has(args, "--check"))
    ops = P.operands(args, P.set("--edition --config-path --config --emit"));
  else if (
    !["prettier", "black", "isort", "ruff", "gofmt", "clang-format", "autopep8", "rustfmt"].includes(name)
  )
    return null;
  if (ops === null) return true;
  r.each(ops.length ? ops : [DOT], cwd, "tree");
  return false;
}

export function shell(r: Reader, args: Word[], cwd: string | null, depth: number): boolean {
  const c = args.findIndex((w) => !w.text.startsWith("--") && !!P.shortCluster(w.text)?.includes("c"));
  if (c !== -1) {
    const script = args[c + 1];
    if (!script) return false;
    if (script.dynamic || depth >= MAX_DEPTH) return r.unreadText(script.text, cwd);
    // `sh -c '… "$1"' _ a.ts`: the words after the script are its $0, $1 …
    const vars = r.vars;
    r.vars = positionalVars(args.slice(c + 2), vars);
    const reads = r.line(script.text, cwd, depth + 1);
    r.vars = vars;
    return reads;
  }
  const file = P.operands(args, P.set("-o -O +o +O"))[0];
  if (file && file.text !== "-") return false; // a script file
  // Reading its standard input: a here-document is the script, or what the line pipes in (`echo '…' | sh`, `sh <<< '…'`).
  const bodies = r.heredocs();
  if (depth >= MAX_DEPTH) return r.stdin === null ? false : r.unreadText(r.stdin, cwd);
  if (bodies.length === 0) return r.stdin !== null && r.line(r.stdin, cwd, depth + 1);
  let reads = true;
  for (const b of bodies) if (!r.line(b, cwd, depth + 1)) reads = false;
  return reads;
}

/** A one-liner: no target when its script only reads; else its path literals and arguments, uncertain. */
export function oneLiner(r: Reader, code: Word, argv: Word[], cwd: string | null): boolean {
  r.opaque.push(code.text, ...argv.map((w) => w.text));
  if (!code.dynamic && scriptOnlyReads(code.text)) return true;
  // A literal only passed to a read call (readFileSync, open(…) to read, a copy's source) is not written.
  const read = readLiterals(code.text);
  for (const p of literalPaths(scriptLiterals(code.text).literals.filter((l) => !read.has(l))))
    r.add(P.word(p), cwd, "write", "uncertain");
  for (const w of argv) if (w.dynamic || !w.text.startsWith("-")) r.add(w, cwd, "write", "uncertain");
  return false;
}

/** An interpreter reading its script from standard input: the here-documents of the command. */
export function stdinScript(r: Reader, cwd: string | null): boolean {
  const bodies = r.heredocs();
  if (bodies.length === 0 && r.stdin !== null) return oneLiner(r, P.word(r.stdin), [], cwd);
  let reads = bodies.length > 0;
  for (const b of bodies) if (!oneLiner(r, P.word(b), [], cwd)) reads = false;
  return reads;
}

export function awk(r: Reader, args: Word[], cwd: string | null, depth: number): boolean {
  const inPlace = args.some(
    (w, i) => (w.text === "-i" && args[i + 1]?.text === "inplace") || w.text === "--include=inplace",
  );
  if (P.has(args, "-f", "--file")) return false; // a program file
  const [program, ...files] = P.operands(args, P.set("-F -v -i --field-separator --assign --include"));
  if (!program) return false;
  r.opaque.push(program.text);
  if (inPlace) return r.each(files, cwd, "write");
  if (program.dynamic) return r.unreadText(program.text, cwd);
  // print > "FILE" and system("CMD") are named; a target built from pieces leaves the literals uncertain.
  const s = awkScript(program.text);
  const reads = recordScript(r, s, cwd, depth);
  const coarse = awkWrites(program.text);
  if (!s.unknown && (!coarse || s.files.length || s.commands.length)) return reads && !coarse;
  const named = new Set(s.files.map((f) => f.path));
  for (const p of literalPaths(scriptLiterals(program.text).literals))
    if (!named.has(p)) r.add(P.word(p), cwd, "write", "uncertain");
  return false;
}

/** node, python, deno …: a module (-m), a version, tests, a script file, or a script on standard input. */
export function interpreter(
  r: Reader,
  base: string,
  args: Word[],
  cwd: string | null,
  depth: number,
): boolean {
  const m = args.findIndex((w) => w.text === "-m");
  if ((base === "python" || base === "pypy") && m !== -1 && args[m + 1])
    return depth < MAX_DEPTH && r.run(args.slice(m + 1), cwd, depth + 1);
  if (args.length === 1 && P.has(args, "--version", "-V", "-v", "version")) return true;
  if ((base === "node" && P.has(args, "--test")) || (base === "deno" && args[0]?.text === "test"))
    return (r.runsCode = true);
  const file = P.operands(args)[0];
  return (!file || file.text === "-") && stdinScript(r, cwd);
}

export function runPackage(r: Reader, rest: Word[], cwd: string | null, depth: number): boolean {
  const first = rest[0];
  if (!first || depth >= MAX_DEPTH) return false;
  return r.run([{ ...first, text: P.packageName(first.text) }, ...rest.slice(1)], cwd, depth + 1);
}

export function packageManager(
  r: Reader,
  name: string,
  args: Word[],
  cwd: string | null,
  depth: number,
): boolean {
  const rest = P.afterRunnerOptions(args, P.set("-w --workspace --filter -C --cwd --prefix --dir"));
  const sub = rest[0]?.text;
  if (sub === undefined) return name === "npm" || name === "pnpm";
  if (
    P.TEST_SCRIPTS.has(sub) ||
    (name === "bun" && sub === "test") ||
    ((sub === "run" || sub === "run-script") && rest[1]?.text.startsWith("test"))
  )
    return (r.runsCode = true);
  if (sub === "exec" || sub === "x" || sub === "dlx")
    return runPackage(r, P.afterRunnerOptions(rest.slice(1), P.RUNNER_VALUES), cwd, depth);
  if (P.PM_READS.has(sub)) return true;
  // pnpm, yarn and bun run a package's binary by its name (pnpm vitest run, yarn prettier --write …).
  if (name !== "npm" && (P.READERS.has(sub) || sub === "prettier" || sub === "eslint"))
    return depth < MAX_DEPTH && r.run(rest, cwd, depth + 1);
  return false;
}

export function patch(r: Reader, args: Word[], cwd: string | null): boolean {
  if (P.has(args, "--dry-run")) return true;
  const out = P.optionValue(args, "o", "output");
  if (out) r.add(out, cwd, "write");
  const file = P.operands(args, P.PATCH_VALUES)[0];
  if (file) {
    r.add(file, cwd, "write");
    return false;
  }
  if (P.optionValue(args, "i", "input")) return false;
  // The diff on standard input: a here-document's, when there is one.
  const p = args.find((w) => w.text.startsWith("-p") && w.text.length > 2);
  const strip = p ? Number(p.text.slice(2)) : NaN;
  for (const body of r.heredocs())
    for (const d of diffPaths(body, Number.isInteger(strip) ? strip : 0)) {
      const path = Number.isInteger(strip) ? d.path : d.path.replace(/^[ab]\//, "");
      r.add(
        P.word(path),
        cwd,
        d.remove ? "remove" : "write",
        Number.isInteger(strip) ? "named" : "uncertain",
      );
    }
  return false;
}

export function find(r: Reader, args: Word[], cwd: string | null, depth: number): boolean {
  const starts: Word[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "-H" || t === "-L" || t === "-P") continue;
    if ((t.startsWith("-") && !args[i]!.dynamic) || t === "(" || t === "!") break;
    starts.push(args[i]!);
  }
  let reads = true;
  let tree: Certainty | null = null;
  let filtered = false;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "-delete") {
      tree = filtered ? "uncertain" : "named";
      reads = false;
    } else if (P.FIND_PRINT.has(t)) {
      if (args[i + 1]) r.add(args[i + 1]!, cwd, "write");
      reads = false;
      i += t === "-fprintf" ? 2 : 1;
    } else if (P.FIND_EXEC.has(t)) {
      let j = i + 1;
      while (j < args.length && args[j]!.text !== ";" && args[j]!.text !== "+") j++;
      // The found paths ({}) are below the starting points, which stand for them.
      const sub = args.slice(i + 1, j).filter((w) => w.text !== "{}");
      if (!(depth < MAX_DEPTH && r.run(sub, cwd, depth + 1))) {
        reads = false;
        tree ??= "uncertain";
      }
      i = j;
    } else if (t.startsWith("-") && t !== "-print" && t !== "-print0" && t !== "-ls") filtered = true;
  }
  if (tree) r.each(starts.length ? starts : [DOT], cwd, "tree", tree);
  return reads;
}

export function go(r: Reader, args: Word[], cwd: string | null): boolean {
  const sub = args[0]?.text ?? "";
  if (sub === "test") r.runsCode = true;
  if (P.GO_READS.has(sub)) return true;
  if (sub === "fmt") {
    // ./... is every package below: the folder in tree mode.
    const ops = P.operands(args.slice(1)).map((w) => ({
      ...w,
      text: w.text.replace(/\/?\.\.\.$/, "") || ".",
    }));
    r.each(ops.length ? ops : [DOT], cwd, "tree");
    return false;
  }
  const out = args.findIndex((w) => w.text === "-o");
  if (out !== -1 && args[out + 1]) r.add(args[out + 1]!, cwd, "write");
  return false;
}

export function tar(r: Reader, args: Word[], cwd: string | null): boolean {
  const first = args[0]?.text ?? "";
  const bundle = first && !first.startsWith("-") ? first : "";
  const letters = bundle + args.map((w) => P.shortCluster(w.text) ?? "").join("");
  const long = (...names: string[]) => P.has(args, ...names.map((n) => `--${n}`));
  if (letters.includes("t") || long("list")) return true;
  // Extraction: into -C DIR and the members it names; without them, into the tree unnamed.
  if (!/[cruA]/.test(letters) && !long("create", "append", "update")) return tarExtract(r, args, cwd);
  let file = P.optionValue(args, "f", "file");
  if (!file && bundle.includes("f")) file = args[1];
  if (file && file.text !== "-") r.add(file, cwd, "write");
  return false;
}
