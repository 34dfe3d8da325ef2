import { posix } from "node:path";
import { lex, type Budget } from "./lex.js";
import { stdoutOf, substitutionOutput } from "./stdout.js";
import {
  expandCommand,
  positionalVars,
  varsAfter,
  type Piece,
  type Scope,
  type ShellEnv,
  type Vars,
} from "./expand.js";

/**
 * Just enough of a POSIX shell reader to find the simple commands a shell
 * line runs: chains (&& || ; | & newline), subshells ( … ), groups { …; },
 * command substitutions $( … ) and `…` (which run too), `sh -c '…'` and
 * `eval`, quoting and escapes, redirections and here-documents, and `cd`
 * (so that `cd sub && git add .` is read in sub). Unlike the exemption
 * parser, which refuses anything it cannot read exactly, this one must read
 * everything it can: what the line itself decides ($PWD, ~, braces, its own
 * variables, `$(pwd)`) it expands (shell/expand.ts), and what it cannot know
 * (the environment, another program's output) it marks as dynamic, so that
 * the caller can assume the worst for that word. Pure.
 */

export interface Word {
  text: string;
  /** Holds an expansion whose value the shell decides at run time ($X, $(…), `…`, ~, {a,b}). */
  dynamic: boolean;
  /** Starts with an unquoted NAME= (an environment assignment when before the program). */
  assign: boolean;
  /** A dynamic word's parts, for expansion (shell/expand.ts). */
  pieces?: Piece[];
}

export interface Redirect {
  /** The operator as written, without its fd number: > >> >| <> &> &>> >& < <& <<<. */
  op: string;
  target: Word;
}

export type { Budget } from "./lex.js";

export interface SimpleCommand {
  words: Word[];
  /** The directory the command runs in (absolute when the start was); null once a `cd` cannot be followed. */
  cwd: string | null;
  /** Its redirections to and from files (here-documents are not among them). A command may be redirections alone (`> f`). */
  redirects: Redirect[];
  /** A script that cannot be read as commands (built at run time, or nested too deep): the caller may only look at its text. */
  unread?: string;
  /** What its standard input surely is: a here-document, a here-string, or a static `echo`/`printf` piped into it. */
  stdin?: string;
  /** The variables the line set before it (for a script it runs: `f=a; sh -c "…"`); absent when none. */
  vars?: Vars;
}

const KEYWORDS = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "esac",
  "time",
]);
/** Lines whose words are not one command (their bodies, after `do`/`in`, are read as commands anyway). */
const SKIP_WHOLE = new Set(["for", "case", "select", "function"]);
const SHELLS = /(^|\/)(sh|bash|zsh|dash|ksh)$/;

function resolveDir(cwd: string | null, words: Word[]): string | null {
  const args = words.slice(1).filter((w) => w.text !== "-P" && w.text !== "-L" && w.text !== "--");
  const target = args[0];
  if (!target || target.dynamic || target.text === "-" || cwd === null) return null;
  return posix.resolve(cwd, target.text);
}

/** A command substitution's body past this length is read as commands, not evaluated for its output. */
const MAX_SUB_EVAL = 16 * 1024;

/**
 * The simple commands of a shell line, in the order they appear (command
 * substitutions first, as the shell runs them), each with its directory,
 * and with `env` (what the caller knows beyond the line: the home folder,
 * the checkout) its words expanded where the line decides them
 * (shell/expand.ts); without it, words stay as the lexer marks them (the
 * Git guard's reading). `cwd` is the shell's starting directory. With a
 * budget, a line past it is read up to it and marked unread (a hostile
 * line of 100,000 commands).
 */
export function simpleCommands(
  src: string,
  cwd: string | null = "/",
  depth = 0,
  budget?: Budget,
  env?: ShellEnv,
): SimpleCommand[] {
  if (depth > 4 || (budget && budget.tokens <= 0)) return [{ words: [], cwd, redirects: [], unread: src }];
  const { tokens, subs, broken, bodies } = lex(src, budget);
  const out: SimpleCommand[] = [];
  const append = (cmds: SimpleCommand[]) => {
    for (const c of cmds) out.push(c);
  };
  // A line left open reads to its end: what was read stands, and the caller is told the rest may differ.
  if (broken) out.push({ words: [], cwd, redirects: [], unread: src });
  for (const s of subs) {
    // Each substitution costs a token, so that 100,000 empty `` cost what 100,000 words do.
    if (budget && --budget.tokens <= 0) {
      if (!broken) out.push({ words: [], cwd, redirects: [], unread: src });
      break;
    }
    append(simpleCommands(s, cwd, depth + 1, budget, env));
  }
  const stack: { here: string | null; vars: Vars }[] = [];
  let here = cwd;
  let vars: Vars = env?.vars ?? new Map();
  const nested = (more: Vars): ShellEnv | undefined => env && { ...env, vars: more };
  let words: Word[] = [];
  let redirects: Redirect[] = [];
  let redirectOp: string | null = null;
  /** The next command's standard input: a here-document's body or what the command before the pipe printed; undefined when not known. */
  let stdin: string | null | undefined;
  /** `$(pwd)`, `$(echo a)`: the output of a substitution when the line decides it. */
  const output = (body: string, at: string | null): string | null => {
    if (body.length > MAX_SUB_EVAL || depth >= 4) return null;
    if (body.trim() === "pwd") return at;
    return substitutionOutput(simpleCommands(body, at, depth + 1, budget, nested(vars)), env ?? {});
  };
  const scope = (): Scope => ({ cwd: here, env: env ?? {}, vars, sub: output });
  /** One run of a simple command (a `for` variable makes several); returns the command when it is one to read. */
  const one = (
    rest: Word[],
    redirs: Redirect[],
    input: string | null | undefined,
    several: boolean,
  ): SimpleCommand | null => {
    for (const r of redirs) {
      if (r.op === "<<<") input = r.target.dynamic ? null : r.target.text + "\n";
      else if (r.op === "<" || r.op === "<&" || r.op === "<>") input = null;
    }
    const known = (c: SimpleCommand): SimpleCommand => {
      if (typeof input === "string") c.stdin = input;
      if (vars.size) c.vars = vars;
      return c;
    };
    // The redirections happen whatever the words turn out to be (`> f`, `cd x > f`, `( … ) > f`).
    if (redirs.length) out.push({ words: [], cwd: here, redirects: redirs });
    if (rest.length === 0 || SKIP_WHOLE.has(rest[0]!.text)) return null;
    const prog = rest.find((w) => !w.assign);
    // `MY_VAR=x cd dir && …` changes the directory too (cd is a builtin; the assignment only lasts for it).
    if (prog && (prog.text === "cd" || prog.text === "pushd" || prog.text === "popd")) {
      here = prog.text === "popd" || several ? null : resolveDir(here, rest.slice(rest.indexOf(prog)));
      return null;
    }
    // sh -c 'script' and eval: the script is commands of its own.
    const at = rest.indexOf(prog!);
    if (prog && SHELLS.test(prog.text)) {
      const flag = rest.slice(at + 1).findIndex((w) => /^-[a-z]*c[a-z]*$/.test(w.text));
      const script = flag === -1 ? undefined : rest[at + 2 + flag];
      if (script) {
        // A script the shell builds at run time cannot be read as commands: only its visible text is left.
        if (!script.dynamic) {
          const positional = positionalVars(rest.slice(at + 3 + flag), vars);
          append(simpleCommands(script.text, here, depth + 1, budget, nested(positional)));
        } else out.push(known({ words: [], cwd: here, redirects: [], unread: script.text }));
        return null;
      }
    }
    if (prog && prog.text === "eval") {
      append(
        simpleCommands(
          rest
            .slice(at + 1)
            .map((w) => w.text)
            .join(" "),
          here,
          depth + 1,
          budget,
          nested(vars),
        ),
      );
      return null;
    }
    const c = known({ words: rest, cwd: here, redirects: [] });
    out.push(c);
    return c;
  };
  /** Ends a simple command; returns what it prints when the line decides it (for a pipe into a shell). */
  const flush = (): string | null => {
    const cmd = words;
    const redirs = redirects;
    const input = stdin;
    words = [];
    redirects = [];
    redirectOp = null;
    stdin = undefined;
    let start = 0;
    while (start < cmd.length && KEYWORDS.has(cmd[start]!.text) && !cmd[start]!.dynamic) start++;
    const raw = cmd.slice(start);
    const sc = scope();
    const runs = env ? expandCommand(raw, redirs, sc) : [{ words: raw, redirects: redirs }];
    let last: SimpleCommand | null = null;
    for (const run of runs) last = one(run.words, run.redirects, input, runs.length > 1) ?? last;
    // Variables it sets hold for what follows (f=a.ts, export F=…, for f in …).
    const after = env ? varsAfter(raw, sc) : null;
    if (after) vars = after;
    return last && runs.length === 1 && !redirs.some((r) => r.op.includes(">")) ? stdoutOf(last) : null;
  };
  for (const t of tokens) {
    if ("word" in t) {
      if (redirectOp !== null) {
        redirects.push({ op: redirectOp, target: t.word });
        redirectOp = null;
      } else words.push(t.word);
      continue;
    }
    if (t.op === "redirect") {
      redirectOp = t.mode!;
      continue;
    }
    if (t.op === "heredoc") {
      stdin = bodies[Number(t.mode)] ?? null;
      continue;
    }
    const printed = flush();
    if (t.op === "|") stdin = printed;
    if (t.op === "(") stack.push({ here, vars });
    else if (t.op === ")") {
      const top = stack.pop();
      if (top) ({ here, vars } = top);
    }
  }
  flush();
  return out;
}
