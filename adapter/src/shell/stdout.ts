import { posix } from "node:path";
import type { ShellEnv } from "./expand.js";
import type { SimpleCommand } from "./reader.js";

/**
 * What a command prints, where its words decide it: `echo`, `printf` with
 * `%s`, `cat` of a known standard input, `pwd` and a few path programs. The
 * shell reader uses it for a command substitution's value (`$(pwd)`) and
 * for a script piped into a shell (`echo 'rm x' | sh`). Pure.
 */

const MAX_OUTPUT = 64 * 1024;

function escapes(s: string): string | null {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "\\") {
      out += s[i];
      continue;
    }
    const c = s[++i];
    if (c === "n") out += "\n";
    else if (c === "t") out += "\t";
    else if (c === "\\") out += "\\";
    else if (c === '"' || c === "'") out += c;
    else return null;
  }
  return out;
}

function printf(format: string, args: string[]): string | null {
  let out = "";
  let k = 0;
  do {
    let used = false;
    for (let i = 0; i < format.length; i++) {
      const c = format[i]!;
      if (c === "\\") {
        const e = escapes(format.slice(i, i + 2));
        if (e === null) return null;
        out += e;
        i++;
      } else if (c === "%") {
        const d = format[++i];
        if (d === "%") out += "%";
        else if (d === "s") {
          out += args[k++] ?? "";
          used = true;
        } else return null;
      } else out += c;
      if (out.length > MAX_OUTPUT) return null;
    }
    if (!used) break;
  } while (k < args.length);
  return out;
}

/**
 * What a simple command writes to its standard output, when its words
 * decide it: `echo`, `printf` with `%s`, `cat` of its known standard input;
 * null for anything else.
 */
export function stdoutOf(cmd: SimpleCommand): string | null {
  if (cmd.unread !== undefined || cmd.redirects.some((r) => r.op.includes(">"))) return null;
  if (cmd.words.some((w) => w.dynamic)) return null;
  const [prog, ...args] = cmd.words.map((w) => w.text);
  if (prog === "echo") {
    let i = 0;
    let newline = true;
    let interpret = false;
    for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
      if (args[i]!.includes("n")) newline = false;
      if (args[i]!.includes("e")) interpret = true;
    }
    const text = args.slice(i).join(" ");
    const body = interpret ? escapes(text) : text;
    return body === null ? null : body + (newline ? "\n" : "");
  }
  if (prog === "printf" && args[0] !== undefined && !args[0].startsWith("-"))
    return printf(args[0], args.slice(1));
  if (prog === "cat" && (args.length === 0 || (args.length === 1 && args[0] === "-")))
    return cmd.stdin ?? null;
  return null;
}

/**
 * The output of a command substitution run in `cwd`, from its commands as
 * read: `pwd`, `git rev-parse --show-toplevel` (the checkout's root),
 * `echo`/`printf`/`cat <<EOF`, `dirname`/`basename`/`realpath` of a static
 * word; null otherwise. Trailing newlines dropped, as the shell does.
 */
export function substitutionOutput(cmds: SimpleCommand[], env: ShellEnv): string | null {
  const real = cmds.filter((c) => c.words.length || c.redirects.length || c.unread !== undefined);
  if (real.length !== 1) return null;
  const cmd = real[0]!;
  if (cmd.unread !== undefined || cmd.words.some((w) => w.dynamic)) return null;
  const [prog, ...args] = cmd.words.map((w) => w.text);
  let out: string | null = null;
  const one = args.length === 1 && !args[0]!.startsWith("-") ? args[0]! : null;
  if (cmd.redirects.length) return null;
  if (prog === "pwd" && (args.length === 0 || args[0] === "-P" || args[0] === "-L")) out = cmd.cwd;
  else if (prog === "git" && args.join(" ") === "rev-parse --show-toplevel") {
    const root = env.root;
    out = root && cmd.cwd && (cmd.cwd === root || cmd.cwd.startsWith(root + "/")) ? root : null;
  } else if (prog === "dirname" && one) out = posix.dirname(one);
  else if (prog === "basename" && one) out = posix.basename(one);
  else if ((prog === "realpath" || prog === "readlink") && cmd.cwd) {
    const path = args.filter((a) => !a.startsWith("-"));
    if (path.length === 1 && (prog === "realpath" || args.includes("-f")))
      out = posix.resolve(cmd.cwd, path[0]!);
  } else out = stdoutOf(cmd);
  return out === null ? null : out.replace(/\n+$/, "");
}
