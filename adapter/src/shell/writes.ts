import { posix } from "node:path";
import { unwrapCommand } from "../git/classify.js";
import { simpleCommands, type Budget, type Word } from "./reader.js";
import type { Vars } from "./expand.js";
import { patchFiles } from "../guard/patch.js";
import * as C from "./commands.js";
import { outputOptions, outputs } from "./outputs.js";
import { editor, recordScript, sedScript } from "./scripts.js";
import * as P from "./programs.js";
import { heredocBodies, pathLike, pathWords } from "./texts.js";

/**
 * What a shell command writes, moves or deletes, as far as its text shows:
 * the one reader behind the guard-files rule (guard-file-writes.ts) and the
 * rule that holds shell writes to peers' claims like edits. Pure: no file
 * system, no process. A path built at run time (a variable, a script file
 * that writes it, xargs fed from a pipe) is out of reach; what the reader
 * sees but cannot pin down comes back `uncertain`, so that each rule decides
 * how far to trust it.
 */

/** What a command does to a path it names. */
export type WriteMode =
  /** writes it (a redirect, tee, sed -i …) */
  | "write"
  /** appends to it (>>, tee -a) */
  | "append"
  /** removes it, moves it away or replaces it whole (rm -r, mv, a copy landing on it), folders above it included */
  | "remove"
  /** changes it and everything below it (chmod -R, git checkout --, a formatter given a folder) */
  | "tree";

export interface ShellTarget {
  /** The word as the command names it (after quote removal). */
  text: string;
  /** The absolute normalized path, when the word is static and its directory known (the root for a folder above it, removed or changed as a tree); else null. */
  abs: string | null;
  /** The repository-relative path when abs lies inside the root ("" for the root itself); else null. */
  rel: string | null;
  /**
   * `named`: the command shows the path as a write target. `uncertain`: a
   * path in a one-liner's script, an unknown program's operand, a word
   * expanded at run time, a word whose directory is unknown, unread text.
   */
  certainty: "named" | "uncertain";
  mode: WriteMode;
  /** The word holds a run-time expansion ($X/a, ~/a): only its visible tail is known. */
  dynamic: boolean;
  /** The directory the word is relative to; null once a `cd` could not be followed. */
  cwd: string | null;
}

export interface ShellWrites {
  targets: ShellTarget[];
  /** Every simple command is a program known to only read, and no redirect writes. */
  readOnly: boolean;
  /** Part of it could not be read (too long, nested too deep, a quote left open, a script built at run time). */
  unread: boolean;
  /** It runs `cohent init`. */
  init: boolean;
  /** Text it could not follow word by word (one-liner scripts and their arguments, unread parts): a rule may look names up in it. */
  opaque: string[];
  /** It runs the project's own code (a test run): read-only as the reader sees it, yet what that code writes is watched. */
  runsCode: boolean;
}

type Certainty = ShellTarget["certainty"];

/** Past this length a command is not parsed: its path-like words stand for it. */
export const MAX_COMMAND = 256 * 1024;
/** At most this many path-like words stand for text that was not read. */
export const MAX_GUESSES = 512;
const MAX_TARGETS = 4096;
/** Shell tokens read per command, across its nested scripts: an agent's longest chains use a few hundred. */
const MAX_TOKENS = 2048;
const MAX_DEPTH = C.MAX_DEPTH;
/** Here-documents read as a program's script or diff. */
const MAX_BODIES = 64;

const DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/random"]);
const word = P.word;

/** The repository-relative form of an absolute path, case-folded against the root (as the guard compares); null outside it. */
function relativeTo(abs: string, root: string): string | null {
  const a = abs.toLowerCase();
  let r = root.toLowerCase();
  while (r.length > 1 && r.endsWith("/")) r = r.slice(0, -1);
  if (a === r) return "";
  return a.startsWith(r === "/" ? "/" : r + "/") ? abs.slice(r === "/" ? 1 : r.length + 1) : null;
}

/** A static word that names a device (a redirect to /dev/null writes nothing). */
function isDevice(w: Word, cwd: string | null): boolean {
  if (w.dynamic) return false;
  const abs = w.text.startsWith("/") ? posix.normalize(w.text) : cwd && posix.resolve(cwd, w.text);
  return !!abs && (DEVICES.has(abs) || abs.startsWith("/dev/fd/"));
}

class Reader implements C.Reader {
  targets: ShellTarget[] = [];
  keys = new Set<string>();
  unread = false;
  init = false;
  runsCode = false;
  opaque: string[] = [];
  stdin: string | null = null;
  vars: Vars = new Map();
  private bodies: string[] | null = null;
  private budget: Budget = { tokens: MAX_TOKENS };
  constructor(
    readonly command: string,
    readonly cwd: string,
    readonly root: string,
    readonly home: string | null,
  ) {}

  add(w: Word, cwd: string | null, mode: WriteMode, certainty: Certainty = "named"): void {
    if ((w.text === "" && !w.dynamic) || isDevice(w, cwd)) return;
    const abs = w.dynamic || cwd === null ? null : posix.resolve(cwd, w.text);
    const sure: Certainty = abs === null ? "uncertain" : certainty;
    const key = `${sure} ${mode} ${w.dynamic} ${cwd} ${w.text}`;
    if (this.keys.has(key)) return;
    if (this.targets.length >= MAX_TARGETS) return void (this.unread = true);
    this.keys.add(key);
    let rel = abs === null ? null : relativeTo(abs, this.root);
    // A folder above the checkout, removed or changed as a tree (rm -rf .., chmod -R /), takes the checkout with it.
    const above =
      rel === null && abs !== null && (mode === "remove" || mode === "tree") && relativeTo(this.root, abs);
    if (above) rel = "";
    this.targets.push({
      text: w.text,
      abs: above ? posix.normalize(this.root) : abs,
      rel,
      certainty: sure,
      mode,
      dynamic: w.dynamic,
      cwd,
    });
  }

  each(list: Word[], cwd: string | null, mode: WriteMode, certainty: Certainty = "named"): false {
    for (const w of list) this.add(w, cwd, mode, certainty);
    return false;
  }

  /** Text that could not be read: each path-like word in it may be written. */
  unreadText(text: string, cwd: string | null): false {
    this.unread = true;
    this.opaque.push(text);
    for (const p of pathWords(text, MAX_GUESSES)) this.add(word(p), cwd, "write", "uncertain");
    return false;
  }

  heredocs(): string[] {
    if (this.bodies === null) {
      this.bodies = heredocBodies(this.command, MAX_BODIES + 1);
      // Past the bound, none is read: the command as a whole is unread text.
      if (this.bodies.length > MAX_BODIES) {
        this.bodies = [];
        this.unreadText(this.command, this.cwd);
      }
    }
    return this.bodies;
  }

  /** A shell line; true when it only reads. */
  line(src: string, cwd: string | null, depth: number): boolean {
    let reads = true;
    const outer = { stdin: this.stdin, vars: this.vars };
    const env = { home: this.home, root: this.root, vars: this.vars };
    for (const cmd of simpleCommands(src, cwd, depth, this.budget, env)) {
      if (cmd.unread !== undefined) {
        reads = this.unreadText(cmd.unread, cmd.cwd);
        continue;
      }
      for (const r of cmd.redirects) {
        if (r.op === "<" || r.op === "<&" || r.op === "<<<" || isDevice(r.target, cmd.cwd)) continue;
        this.add(r.target, cmd.cwd, r.op === ">>" || r.op === "&>>" ? "append" : "write");
        reads = false;
      }
      // What a program it runs reads as a script: its standard input, the line's variables.
      this.stdin = cmd.stdin ?? null;
      this.vars = cmd.vars ?? env.vars;
      if (cmd.words.length && !this.run(cmd.words, cmd.cwd, depth)) reads = false;
    }
    this.stdin = outer.stdin;
    this.vars = outer.vars;
    return reads;
  }

  /** One simple command's words; true when the program only reads. */
  run(words: Word[], cwd: string | null, depth: number): boolean {
    if (words[0]?.text === "command" && (words[1]?.text === "-v" || words[1]?.text === "-V")) return true;
    let cmd: Word[];
    try {
      cmd = unwrapCommand(words).words;
    } catch {
      // unwrapCommand looks wrappers up in a plain object: `toString -x` reaches Object.prototype's and throws.
      return this.unknown(words.slice(1), cwd);
    }
    const prog = cmd[0];
    if (!prog) return true; // assignments alone
    const args = cmd.slice(1);
    if (prog.dynamic) return this.unknown(args, cwd);
    const name = posix.basename(prog.text);
    const base = P.unversioned(name);
    if (P.runsInit(name, args)) {
      this.init = true;
      return false;
    }
    const more = Object.hasOwn(P.MORE_WRAPPERS, name) ? P.MORE_WRAPPERS[name] : undefined;
    if (more) return depth < MAX_DEPTH && this.run(P.afterRunnerOptions(args, more), cwd, depth + 1);
    const add = (list: Word[], mode: WriteMode, certainty: Certainty = "named") =>
      this.each(list, cwd, mode, certainty);
    // A compiler's or generator's output file or folder (tsc --outDir, gcc -o), a download, an archive's folder.
    if (outputOptions(this, name, args, cwd)) return false;
    const output = outputs(this, name, args, cwd, depth);
    if (output !== null) return output;
    switch (name) {
      case "rm":
      case "rmdir":
      case "unlink":
      case "shred":
      case "srm":
        return add(P.operands(args), "remove");
      case "truncate":
        return add(P.operands(args, P.TRUNCATE_VALUES), "write");
      case "touch":
        return add(P.operands(args, P.TOUCH_VALUES), "write");
      case "mkdir":
        return add(P.operands(args, P.MKDIR_VALUES), "write");
      case "tee":
      case "sponge":
        return add(P.operands(args), P.has(args, "-a", "--append") ? "append" : "write");
      case "dos2unix":
      case "unix2dos":
        return add(P.operands(args), "write");
      case "mv":
        return add(C.destination(this, args, cwd, P.CP_VALUES), "remove");
      case "cp":
        C.destination(this, args, cwd, P.CP_VALUES);
        return false;
      case "rsync":
      case "scp":
        C.destination(this, args, cwd, name === "rsync" ? P.RSYNC_VALUES : P.SCP_VALUES, null);
        return false;
      case "install":
        if (P.has(args, "-d", "--directory")) return add(P.operands(args, P.INSTALL_VALUES), "write");
        C.destination(this, args, cwd, P.INSTALL_VALUES);
        return false;
      case "ln":
        // A link to a file is a second name to write it through: uncertain, the link itself named.
        return add(C.destination(this, args, cwd, P.CP_VALUES), "write", "uncertain");
      case "sed": {
        const s = P.sedArgs(args);
        let reads = !s.inPlace && !s.scriptFile;
        if (s.inPlace) add(s.files, "write");
        // `w FILE`, `s/a/b/w FILE` and `e CMD` in the script write and run, in place or not.
        for (const script of s.scripts) {
          if (script.dynamic) reads = this.unreadText(script.text, cwd);
          else if (!recordScript(this, sedScript(script.text), cwd, depth)) reads = false;
        }
        return reads;
      }
      case "dd": {
        const of = args.filter((w) => w.text.startsWith("of=")).map((w) => ({ ...w, text: w.text.slice(3) }));
        return of.length === 0 || add(of, "write");
      }
      case "patch":
        return C.patch(this, args, cwd);
      case "apply_patch":
      case "applypatch":
        for (const f of patchFiles(this.command)) {
          add([word(f.path)], f.op === "delete" || f.moveTo !== null ? "remove" : "write");
          if (f.moveTo !== null) add([word(f.moveTo)], "write");
        }
        return false;
      case "sort": {
        const out = P.optionValue(args, "o", "output");
        return out ? add([out], "write") : true;
      }
      case "uniq": {
        const out = P.operands(args, P.set("-f -s -w --skip-fields --skip-chars --check-chars"))[1];
        return out ? add([out], "write") : true;
      }
      case "find":
        return C.find(this, args, cwd, depth);
      case "git":
        return C.git(this, args, cwd);
      case "go":
        return C.go(this, args, cwd);
      case "tar":
        return C.tar(this, args, cwd);
      case "zip":
        return add(P.operands(args).slice(0, 1), "write");
      case "cargo":
        if (args[0]?.text === "test") this.runsCode = true;
        return P.CARGO_READS.has(args[0]?.text ?? "") && !P.has(args, "--fix");
      case "vitest":
      case "jest":
        this.runsCode = true;
        return !P.has(args, "-u", "--update", "--updateSnapshot");
      case "tsc":
      case "vue-tsc":
        return P.has(args, "--noEmit", "--version", "-v", "--help", "--showConfig");
      case "fd":
      case "fdfind":
        return !P.has(args, "-x", "-X", "--exec", "--exec-batch");
      case "yq":
        return P.has(args, "-i", "--inplace") ? add(P.operands(args).slice(1), "write") : true;
    }
    const fix = C.formatter(this, name, args, cwd);
    if (fix !== null) return fix;
    // vim -c 'cmd' +10 file: the scripts are not files (their own writes are read from them).
    if (P.EDITORS.has(name)) return editor(this, name, args, cwd, depth);
    if (P.PERMISSIONS.has(name)) return C.permissions(this, args, cwd);
    if (P.COMPRESSORS.has(name)) {
      if (P.has(args, "-c", "--stdout", "-l", "--list", "-t", "--test")) return true;
      return add(P.operands(args), "remove");
    }
    if (P.SHELLS.has(base)) return C.shell(this, args, cwd, depth);
    if (base === "perl" || base === "ruby") {
      const p = P.perlArgs(args);
      if (p.inPlace) {
        if (p.script) this.opaque.push(p.script.text);
        return add(p.files, "write");
      }
      if (p.script) return C.oneLiner(this, p.script, p.files, cwd);
      return p.files.length === 0 && C.stdinScript(this, cwd);
    }
    if (P.AWKS.has(name)) return C.awk(this, args, cwd, depth);
    const script = P.oneLiner(name, args);
    if (script) return script[0] ? C.oneLiner(this, script[0], script.slice(1), cwd) : false;
    if (P.RUNNERS.has(name))
      return C.runPackage(this, P.afterRunnerOptions(args, P.RUNNER_VALUES), cwd, depth);
    const verb = args[0]?.text;
    if (
      (verb === "run" &&
        ["uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pipx", "conda", "mamba"].includes(name)) ||
      (verb === "exec" && name === "bundle")
    )
      return C.runPackage(this, P.afterRunnerOptions(args.slice(1), P.RUNNER_VALUES), cwd, depth);
    if (name === "npm" || name === "pnpm" || name === "yarn" || name === "bun")
      return C.packageManager(this, name, args, cwd, depth);
    if (P.INTERPRETERS.has(base)) return C.interpreter(this, base, args, cwd, depth);
    if (P.TEST_RUNNERS.has(name)) this.runsCode = true;
    if (P.READERS.has(name) || name === "json.tool") return true;
    if (P.TARGETLESS.has(name)) return false;
    // A script of the checkout (./build.sh src/a.ts): what it writes is its own, as a script file run by an interpreter.
    if (prog.text.includes("/") && !prog.text.startsWith("/")) return false;
    return this.unknown(args, cwd);
  }

  /** A program nobody listed: each operand that looks like a path may be written. */
  unknown(args: Word[], cwd: string | null): false {
    for (const w of P.operands(args))
      if (w.dynamic ? w.text.includes("/") : pathLike(w.text)) this.add(w, cwd, "write", "uncertain");
    // --out=PATH: an option's value may be its output as much as an operand.
    for (const w of args) {
      const eq = w.text.indexOf("=");
      const value = w.text.startsWith("--") && eq !== -1 ? w.text.slice(eq + 1) : "";
      if (!w.dynamic && pathLike(value)) this.add({ ...w, text: value }, cwd, "write", "uncertain");
    }
    return false;
  }
}

/**
 * What a shell command writes: `cwd` is the shell's directory and `root`
 * the checkout's, both absolute; `env.home` the home folder `~` and `$HOME`
 * stand for (the hook's HOME). Bounded: a command past MAX_COMMAND is not
 * parsed, and every scan is linear in its text.
 */
export function shellWrites(
  command: string,
  cwd: string,
  root: string,
  env: { home?: string | null } = {},
): ShellWrites {
  const r = new Reader(command, cwd, root, env.home ?? null);
  const reads = command.length > MAX_COMMAND ? r.unreadText(command, cwd) : r.line(command, cwd, 0);
  return {
    targets: r.targets,
    readOnly: reads && !r.unread,
    unread: r.unread,
    init: r.init,
    opaque: r.opaque,
    runsCode: r.runsCode,
  };
}
