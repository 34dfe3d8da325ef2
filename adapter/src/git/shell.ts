import { posix } from "node:path";

/**
 * Just enough of a POSIX shell reader to find the simple commands a shell
 * line runs: chains (&& || ; | & newline), subshells ( … ), groups { …; },
 * command substitutions $( … ) and `…` (which run too), `sh -c '…'` and
 * `eval`, quoting and escapes, redirections and here-documents, and `cd`
 * (so that `cd sub && git add .` is read in sub). Unlike the exemption
 * parser, which refuses anything it cannot read exactly, this one must read
 * everything it can and mark what it cannot know (a $VAR, a substitution,
 * a brace or tilde expansion) as dynamic, so that the caller can assume the
 * worst for that word. Pure.
 */

export interface Word {
  text: string;
  /** Holds an expansion whose value the shell decides at run time ($X, $(…), `…`, ~, {a,b}). */
  dynamic: boolean;
  /** Starts with an unquoted NAME= (an environment assignment when before the program). */
  assign: boolean;
}

export interface Redirect {
  /** The operator as written, without its fd number: > >> >| <> &> &>> >& < <& <<<. */
  op: string;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  /** The directory the command runs in (absolute when the start was); null once a `cd` cannot be followed. */
  cwd: string | null;
  /** Its redirections to and from files (here-documents are not among them). A command may be redirections alone (`> f`). */
  redirects: Redirect[];
  /** A script that cannot be read as commands (built at run time, or nested too deep): the caller may only look at its text. */
  unread?: string;
}

type Token = { op: string; mode?: string } | { word: Word };

interface Lexed {
  tokens: Token[];
  /** Bodies of command substitutions, in order: they run as commands of their own. */
  subs: string[];
  /** A quote, substitution or expansion left open, or the budget spent: the line is not all read. */
  broken: boolean;
}

// Sticky (matched at lastIndex): a match never copies the rest of the line, which on a long hostile line would cost its square.
const HEREDOC_OP = /<<-?[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/y;
const DELIMITER = /[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/y;
const REDIRECT_OP = /<<<|<<-|<<|<>|<&|>>|>&|>\||<|>/y;
const PARAMETER = /[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]/y;
const FD_DIGITS = /[0-9]*-?/y;

function stickyExec(re: RegExp, s: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(s);
}

/** Index of the `)` closing a `$(` that opened just before `start`, skipping quotes and here-documents; -1 if none. */
function closingParen(s: string, start: number): number {
  let depth = 1;
  const pending: string[] = [];
  for (let i = start; i < s.length; i++) {
    const c = s[i]!;
    if (c === "<" && s[i + 1] === "<" && s[i + 2] !== "<") {
      const d = stickyExec(HEREDOC_OP, s, i);
      if (d) {
        pending.push(d[1] ?? d[2] ?? d[3]!);
        i += d[0].length - 1;
        continue;
      }
    }
    if (c === "\n" && pending.length) {
      // The here-document's body (an apostrophe in a commit message) is data: skip to its delimiter line.
      for (const delim of pending.splice(0)) {
        for (;;) {
          const nl = s.indexOf("\n", i + 1);
          const line = s.slice(i + 1, nl === -1 ? s.length : nl);
          i = nl === -1 ? s.length : nl;
          if (line.replace(/^\t+/, "") === delim || nl === -1) break;
        }
      }
      i--;
      continue;
    }
    if (c === "\\") i++;
    else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) return -1;
      i = end;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === "\\") i++;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return -1;
}

/** How many tokens a caller lets the reader make, across its nested reads; past it the rest is unread. */
export interface Budget {
  tokens: number;
}

function lex(src: string, budget?: Budget): Lexed {
  const tokens: Token[] = [];
  const subs: string[] = [];
  let broken = false;
  let word: Word | null = null;
  /** The word holds an unquoted `=` already (only its first can make it an assignment). */
  let equals = false;
  let heredocs: string[] = [];
  const begin = () => (word ??= { text: "", dynamic: false, assign: false });
  const end = () => {
    if (word) tokens.push({ word });
    word = null;
    equals = false;
  };
  /** Reads `$…` at i (the `$`); returns the index of its last character. */
  const dollar = (i: number): number => {
    const w = begin();
    const next = src[i + 1];
    if (next === "(") {
      const close = closingParen(src, i + 2);
      if (close === -1) broken = true;
      const stop = close === -1 ? src.length : close;
      if (src[i + 2] !== "(") subs.push(src.slice(i + 2, stop));
      w.dynamic = true;
      return stop;
    }
    if (next === "{") {
      const close = src.indexOf("}", i + 2);
      if (close === -1) broken = true;
      w.dynamic = true;
      return close === -1 ? src.length : close;
    }
    if (next === "'") {
      const close = src.indexOf("'", i + 2);
      if (close === -1) broken = true;
      const body = src.slice(i + 2, close === -1 ? src.length : close);
      if (body.includes("\\")) w.dynamic = true;
      w.text += body;
      return close === -1 ? src.length : close;
    }
    const m = stickyExec(PARAMETER, src, i + 1);
    if (m) {
      w.dynamic = true;
      return i + m[0].length;
    }
    w.text += "$";
    return i;
  };
  const backtick = (i: number): number => {
    let j = i + 1;
    for (; j < src.length && src[j] !== "`"; j++) if (src[j] === "\\") j++;
    if (j >= src.length) broken = true;
    subs.push(src.slice(i + 1, j));
    begin().dynamic = true;
    return j;
  };
  for (let i = 0; i < src.length; i++) {
    if (budget && tokens.length >= budget.tokens) {
      broken = true;
      break;
    }
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\r") {
      end();
      continue;
    }
    if (c === "\n") {
      end();
      tokens.push({ op: ";" });
      // Here-document bodies are data, not commands.
      for (const delim of heredocs) {
        let j = i + 1;
        for (;;) {
          const nl = src.indexOf("\n", j);
          const line = src.slice(j, nl === -1 ? src.length : nl);
          j = nl === -1 ? src.length : nl + 1;
          if (line.replace(/^\t+/, "") === delim || nl === -1) break;
        }
        i = j - 1;
      }
      heredocs = [];
      continue;
    }
    if (c === "#" && !word) {
      const nl = src.indexOf("\n", i);
      i = (nl === -1 ? src.length : nl) - 1;
      continue;
    }
    if (c === "\\") {
      if (src[i + 1] === "\n") i++;
      else if (i + 1 < src.length) begin().text += src[++i];
      continue;
    }
    if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close === -1) broken = true;
      begin().text += src.slice(i + 1, close === -1 ? src.length : close);
      i = close === -1 ? src.length : close;
      continue;
    }
    if (c === '"') {
      const w = begin();
      let j = i + 1;
      for (; j < src.length && src[j] !== '"'; j++) {
        const d = src[j]!;
        if (d === "\\" && /[$`"\\\n]/.test(src[j + 1] ?? "")) {
          if (src[j + 1] !== "\n") w.text += src[j + 1];
          j++;
        } else if (d === "$") j = dollar(j);
        else if (d === "`") j = backtick(j);
        else w.text += d;
      }
      if (j >= src.length) broken = true;
      i = j;
      continue;
    }
    if (c === "$") {
      i = dollar(i);
      continue;
    }
    if (c === "`") {
      i = backtick(i);
      continue;
    }
    if (c === "<" || c === ">") {
      // A redirection: drop a leading fd number, then the operator; the reader keeps its target word as a redirect, not an argument.
      const w = word as Word | null;
      if (w && /^[0-9]+$/.test(w.text) && !w.dynamic) word = null;
      else end();
      const m = stickyExec(REDIRECT_OP, src, i)!;
      i += m[0].length - 1;
      if (m[0] === "<<" || m[0] === "<<-") {
        const d = stickyExec(DELIMITER, src, i + 1);
        if (d) {
          heredocs.push(d[1] ?? d[2] ?? d[3]!);
          i += d[0].length;
        }
        continue;
      }
      if ((m[0] === ">&" || m[0] === "<&") && /^[0-9-]/.test(src[i + 1] ?? "")) {
        i += stickyExec(FD_DIGITS, src, i + 1)![0].length;
        continue;
      }
      tokens.push({ op: "redirect", mode: m[0] });
      continue;
    }
    if (c === "&" && src[i + 1] === ">") {
      end();
      const append = src[i + 2] === ">";
      i += append ? 2 : 1;
      tokens.push({ op: "redirect", mode: append ? "&>>" : "&>" });
      continue;
    }
    if (c === ";" || c === "&" || c === "|" || c === "(" || c === ")") {
      end();
      const two = src.slice(i, i + 2);
      if (two === "&&" || two === "||" || two === ";;" || two === "|&") {
        tokens.push({ op: two === ";;" ? ";" : two === "|&" ? "|" : two });
        i++;
      } else tokens.push({ op: c });
      continue;
    }
    const w = begin();
    if (c === "~" && w.text === "") w.dynamic = true;
    if ((c === "{" || c === "}") && !(w.text === "" && /[\s;&|]/.test(src[i + 1] ?? " "))) w.dynamic = true;
    if (c === "=" && !equals) {
      equals = true;
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.text) && !w.dynamic) w.assign = true;
    }
    w.text += c;
  }
  end();
  if (budget) budget.tokens -= tokens.length;
  return { tokens, subs, broken };
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

/**
 * The simple commands of a shell line, in the order they appear (command
 * substitutions first, as the shell runs them), each with its directory.
 * `cwd` is the shell's starting directory. With a budget, a line past it is
 * read up to it and marked unread (a hostile line of 100,000 commands).
 */
export function simpleCommands(
  src: string,
  cwd: string | null = "/",
  depth = 0,
  budget?: Budget,
): SimpleCommand[] {
  if (depth > 4 || (budget && budget.tokens <= 0)) return [{ words: [], cwd, redirects: [], unread: src }];
  const { tokens, subs, broken } = lex(src, budget);
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
    append(simpleCommands(s, cwd, depth + 1, budget));
  }
  const stack: (string | null)[] = [];
  let here = cwd;
  let words: Word[] = [];
  let redirects: Redirect[] = [];
  let redirectOp: string | null = null;
  const flush = () => {
    const cmd = words;
    const redirs = redirects;
    words = [];
    redirects = [];
    redirectOp = null;
    // The redirections happen whatever the words turn out to be (`> f`, `cd x > f`, `( … ) > f`).
    if (redirs.length) out.push({ words: [], cwd: here, redirects: redirs });
    let start = 0;
    while (start < cmd.length && KEYWORDS.has(cmd[start]!.text) && !cmd[start]!.dynamic) start++;
    const rest = cmd.slice(start);
    if (rest.length === 0 || SKIP_WHOLE.has(rest[0]!.text)) return;
    const prog = rest.find((w) => !w.assign);
    // `MY_VAR=x cd dir && …` changes the directory too (cd is a builtin; the assignment only lasts for it).
    if (prog && (prog.text === "cd" || prog.text === "pushd" || prog.text === "popd")) {
      here = prog.text === "popd" ? null : resolveDir(here, rest.slice(rest.indexOf(prog)));
      return;
    }
    // sh -c 'script' and eval: the script is commands of its own.
    const at = rest.indexOf(prog!);
    if (prog && SHELLS.test(prog.text)) {
      const flag = rest.slice(at + 1).findIndex((w) => /^-[a-z]*c[a-z]*$/.test(w.text));
      const script = flag === -1 ? undefined : rest[at + 2 + flag];
      if (script) {
        // A script the shell builds at run time cannot be read as commands: only its visible text is left.
        if (!script.dynamic) append(simpleCommands(script.text, here, depth + 1, budget));
        else out.push({ words: [], cwd: here, redirects: [], unread: script.text });
        return;
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
        ),
      );
      return;
    }
    out.push({ words: rest, cwd: here, redirects: [] });
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
    flush();
    if (t.op === "(") stack.push(here);
    else if (t.op === ")") here = stack.length ? stack.pop()! : here;
  }
  flush();
  return out;
}
