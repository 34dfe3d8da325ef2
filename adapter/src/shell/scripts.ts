import type { Word } from "./reader.js";
import type { Reader } from "./commands.js";
import * as P from "./programs.js";
import { literalPaths, scriptLiterals } from "./texts.js";

/**
 * The scripts of programs that are not shells, read for the files they
 * write and the commands they run: sed's `w FILE`, `s///w FILE` and `e
 * CMD`; awk's `print > "FILE"`, `print | "CMD"` and `system("CMD")`; an
 * editor's `-c`/`--cmd`/`+cmd` ex commands (`w FILE`, `!CMD`), which are
 * scripts, not files to edit. Pure scans, linear in their text.
 */

export interface ScriptWrites {
  files: { path: string; append: boolean }[];
  /** Shell commands the script runs. */
  commands: string[];
  /** Part of it could not be read (a command it builds, `s///e`): it may write anything. */
  unknown: boolean;
}

const empty = (): ScriptWrites => ({ files: [], commands: [], unknown: false });

/** A sed script's written files (`w FILE`, `W FILE`, `s/a/b/w FILE`) and run commands (`e CMD`). */
export function sedScript(script: string): ScriptWrites {
  const out = empty();
  const n = script.length;
  let i = 0;
  const toEol = () => {
    const e = script.indexOf("\n", i);
    const s = script.slice(i, e === -1 ? n : e);
    i = e === -1 ? n : e + 1;
    return s;
  };
  const ws = () => {
    while (i < n && (script[i] === " " || script[i] === "\t")) i++;
  };
  /** Past a delimited part (a regex, a replacement); false when it does not end. */
  const part = (d: string): boolean => {
    for (; i < n && script[i] !== d; i++) if (script[i] === "\\") i++;
    if (i >= n) return false;
    i++;
    return true;
  };
  const address = () => {
    const c = script[i];
    if (c === undefined) return;
    if (c >= "0" && c <= "9") while (i < n && /[0-9~]/.test(script[i]!)) i++;
    else if (c === "$") i++;
    else if (c === "/" || c === "\\") {
      const d = c === "/" ? "/" : script[i + 1]!;
      i += c === "/" ? 1 : 2;
      if (!part(d)) out.unknown = true;
      while (script[i] === "I" || script[i] === "M") i++;
    } else if (c === "+" || c === "~") {
      i++;
      while (i < n && script[i]! >= "0" && script[i]! <= "9") i++;
    }
  };
  while (i < n && !out.unknown) {
    ws();
    const c0 = script[i];
    if (c0 === ";" || c0 === "\n" || c0 === "}" || c0 === "{") {
      i++;
      continue;
    }
    address();
    ws();
    if (script[i] === ",") {
      i++;
      ws();
      address();
    }
    ws();
    while (script[i] === "!" || script[i] === " ") i++;
    const c = script[i++];
    if (c === undefined) break;
    if (c === "{" || c === "}") continue;
    if (c === "#" || c === "a" || c === "i" || c === "c" || c === "r" || c === "R") {
      // Text or a file read: to the end of the line (a trailing backslash continues it).
      let line = toEol();
      while (line.endsWith("\\") && i < n) line = toEol();
      continue;
    }
    if (c === ":" || c === "b" || c === "t" || c === "T" || c === "v") {
      while (i < n && script[i] !== ";" && script[i] !== "\n") i++;
      continue;
    }
    if (c === "w" || c === "W") {
      ws();
      const file = toEol();
      if (file) out.files.push({ path: file, append: false });
      continue;
    }
    if (c === "e") {
      ws();
      const cmd = toEol().trim();
      if (cmd) out.commands.push(cmd);
      else out.unknown = true; // runs the pattern space
      continue;
    }
    if (c === "s" || c === "y") {
      const d = script[i++];
      if (d === undefined || d === "\n" || d === "\\" || !part(d) || !part(d)) {
        out.unknown = true;
        break;
      }
      if (c === "y") continue;
      for (; i < n && /[gpiImMe0-9w]/.test(script[i]!); i++) {
        if (script[i] === "e") out.unknown = true;
        if (script[i] === "w") {
          i++;
          ws();
          const file = toEol();
          if (file) out.files.push({ path: file, append: false });
          break;
        }
      }
      continue;
    }
    if ("lLqQ".includes(c)) {
      while (i < n && /[0-9 ]/.test(script[i]!)) i++;
      continue;
    }
    if ("=dDgGhHxnNpPzF".includes(c)) continue;
    out.unknown = true;
  }
  return out;
}

/** An awk string literal at i (the quote): its value and the index past it. */
function awkString(p: string, i: number): { value: string; end: number } {
  let value = "";
  let j = i + 1;
  for (; j < p.length && p[j] !== '"'; j++) {
    if (p[j] === "\\" && j + 1 < p.length) {
      const e = p[++j]!;
      value += e === "n" ? "\n" : e === "t" ? "\t" : e;
    } else value += p[j];
  }
  return { value, end: j + 1 };
}

const isWordChar = (c: string | undefined) => !!c && /[A-Za-z0-9_]/.test(c);

/** An awk program's `print > "FILE"`, `print >> "FILE"`, `print | "CMD"` and `system("CMD")`; a target built from pieces is unknown. */
export function awkScript(p: string): ScriptWrites {
  const out = empty();
  let printing = false;
  let depth = 0;
  /** The literal ending a statement at i, or null when the target is an expression. */
  const plain = (i: number): { value: string; end: number } | null => {
    while (p[i] === " " || p[i] === "\t") i++;
    if (p[i] !== '"') return null;
    const s = awkString(p, i);
    let k = s.end;
    while (p[k] === " " || p[k] === "\t") k++;
    return k >= p.length || ";}\n#)".includes(p[k]!) ? s : null;
  };
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '"') {
      i = awkString(p, i).end - 1;
      continue;
    }
    if (c === "#") {
      const e = p.indexOf("\n", i);
      i = e === -1 ? p.length : e - 1;
      continue;
    }
    if (isWordChar(c) && !isWordChar(p[i - 1])) {
      let j = i;
      while (isWordChar(p[j])) j++;
      const name = p.slice(i, j);
      if (name === "print" || name === "printf") {
        printing = true;
        depth = 0;
      } else if (name === "system") {
        let k = j;
        while (p[k] === " ") k++;
        const s = p[k] === "(" ? plain(k + 1) : null;
        if (s) out.commands.push(s.value);
        else out.unknown = true;
      }
      i = j - 1;
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === ";" || c === "}" || c === "\n" || c === "{") printing = false;
    else if ((c === ">" || c === "|") && printing && depth <= 0) {
      const append = c === ">" && p[i + 1] === ">";
      const at = i + (append || (c === "|" && p[i + 1] === "&") ? 2 : 1);
      const s = plain(at);
      if (!s) out.unknown = true;
      else if (c === ">") out.files.push({ path: s.value, append });
      else out.commands.push(s.value);
      if (s) i = s.end - 1;
      printing = false;
    }
  }
  return out;
}

const EX_WRITES = new Set(
  "w wr wri writ write wq x xi xit exi exit sav saveas up upd upda updat update wa wall wqa wqall xa xall".split(
    " ",
  ),
);

/** Ex commands (vim -c, ed and ex scripts): files written (`w FILE`, `w >> FILE`, `saveas FILE`) and shell commands (`!CMD`, `w !CMD`, `r !CMD`). */
export function exScript(script: string): ScriptWrites {
  const out = empty();
  for (const raw of script.split("\n")) {
    let rest = raw;
    while (rest) {
      rest = rest.replace(/^[\s:]+/, "");
      // A range: %, numbers, ., $, marks, patterns, offsets.
      rest = rest.replace(/^(?:%|\d+|\.|\$|'[a-z<>]|\/(?:\\.|[^/])*\/|\?(?:\\.|[^?])*\?|[+-]\d*|[,;])+/, "");
      rest = rest.replace(/^sil(?:e(?:n(?:t)?)?)?!?\s*/, "");
      if (rest.startsWith("!")) {
        out.commands.push(rest.slice(1));
        break;
      }
      const m = /^([a-z]+)(!?)\s*/.exec(rest);
      if (!m) break;
      const name = m[1]!;
      let arg = rest.slice(m[0].length);
      if ((name === "g" || name === "global" || name === "v" || name === "vglobal") && arg) {
        // g/pattern/command: the command runs.
        const d = arg[0]!;
        const end = arg.indexOf(d, 1);
        rest = end === -1 ? "" : arg.slice(end + 1);
        continue;
      }
      if (name === "exe" || name === "execute" || name === "norm" || name === "normal") {
        out.unknown = true;
        break;
      }
      if (EX_WRITES.has(name) || name === "r" || name === "read") {
        if (arg.startsWith("!")) {
          out.commands.push(arg.slice(1));
          break;
        }
        const bar = arg.indexOf("|");
        const next = bar === -1 ? "" : arg.slice(bar + 1);
        arg = (bar === -1 ? arg : arg.slice(0, bar)).trim();
        if (EX_WRITES.has(name) && arg) {
          const append = arg.startsWith(">>");
          const path = append ? arg.slice(2).trim() : arg;
          if (path) out.files.push({ path, append });
        }
        rest = next;
        continue;
      }
      const bar = arg.indexOf("|");
      rest = bar === -1 ? "" : arg.slice(bar + 1);
    }
  }
  return out;
}

/** Records a script's writes: named files, commands read as shell lines; true when it writes nothing it shows. */
export function recordScript(r: Reader, w: ScriptWrites, cwd: string | null, depth: number): boolean {
  for (const f of w.files) r.add(P.word(f.path), cwd, f.append ? "append" : "write");
  let reads = w.files.length === 0 && !w.unknown;
  for (const c of w.commands) {
    if (depth >= 4) r.unreadText(c, cwd);
    else r.line(c, cwd, depth + 1);
    reads = false;
  }
  return reads;
}

const VIMS = new Set(["vi", "vim", "nvim", "ex", "view", "gvim", "rvim", "vimdiff", "nvi", "evim"]);
const VIM_VALUES = P.set("-u -U -T -t -q -r --servername --listen --remote-send --remote-expr");
const EMACS_VALUES = P.set(
  "-l --load -f --funcall -L --directory --script -u --user --insert -t --terminal --chdir -d --display --name -T --title --fg-color --bg-color -x --init-directory",
);
const NANO_VALUES = P.set(
  "-o --operatingdir -Y --syntax -T --tabsize -r --fill -Q --quotestr -X --wordchars -f --rcfile -C --backupdir -s --speller -J --guidestripe",
);

/**
 * An editor's files (written) and scripts (not files): vim's `-c`, `--cmd`,
 * `+cmd` and `-S`, emacs's `--eval`, nano's option values. An ex script's
 * own writes are named; an elisp one's path literals are uncertain.
 */
export function editor(r: Reader, name: string, args: Word[], cwd: string | null, depth: number): false {
  const files: Word[] = [];
  const scripts: string[] = [];
  const elisp: string[] = [];
  const vim = VIMS.has(name);
  let ex = name === "ex" || name === "ed";
  let dashes = false;
  const client = name === "emacsclient" && P.has(args, "-e", "--eval");
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (dashes || w.dynamic || t === "-" || !(t.startsWith("-") || t.startsWith("+"))) {
      if (client) elisp.push(t);
      else files.push(w);
      continue;
    }
    if (t === "--") dashes = true;
    else if (t.startsWith("+")) {
      if (vim) scripts.push(t.slice(1) || "$");
    } else if (vim) {
      if (t === "-c" || t === "--cmd") scripts.push(args[++i]?.text ?? "");
      else if (t === "-S") {
        if (args[i + 1] && !args[i + 1]!.text.startsWith("-")) i++;
      } else if (t === "-s") {
        if (!ex) i++; // -s {scriptin}, read; in ex mode, silent
      } else if (t === "-w" || t === "-W" || t === "-i" || t === "--startuptime" || t === "--log") {
        const out = args[++i];
        if (out && out.text !== "NONE") r.add(out, cwd, "write");
      } else if (/^-[eE]s?$/.test(t) || t === "-es" || t === "-Es") ex = true;
      else if (VIM_VALUES.has(t)) i++;
    } else if (name === "emacs" || name === "emacsclient") {
      if (t === "--eval" || t === "-eval" || (client && t === "-e")) elisp.push(args[++i]?.text ?? "");
      else if (t.startsWith("--eval=")) elisp.push(t.slice(7));
      else if (t === "--visit" || t === "--file" || t === "--find-file") {
        if (args[i + 1]) files.push(args[++i]!);
      } else if (EMACS_VALUES.has(t)) i++;
    } else if (name === "nano" || name === "pico") {
      if (NANO_VALUES.has(t)) i++;
    } else if (name === "ed" && t === "-p") i++;
    else if (name === "micro" && !["-version", "-help", "-debug", "-clean", "-profile"].includes(t)) i++;
  }
  r.each(files, cwd, "write");
  for (const s of scripts) recordScript(r, exScript(s), cwd, depth);
  // ed, ex and vim -e read ex commands from their standard input.
  if (ex) {
    const bodies = r.stdin !== null ? [r.stdin] : r.heredocs();
    for (const b of bodies) recordScript(r, exScript(b), cwd, depth);
  }
  for (const e of elisp) {
    r.opaque.push(e);
    for (const p of literalPaths(scriptLiterals(e).literals)) r.add(P.word(p), cwd, "write", "uncertain");
  }
  return false;
}
