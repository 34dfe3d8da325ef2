import type { Piece } from "./expand.js";
import type { Word } from "./reader.js";

/**
 * The shell reader's lexer (shell/reader.ts reads its tokens as commands): words
 * with their quoting and the parts a shell expands (shell/expand.ts),
 * operators, redirections, here-documents with their bodies, and the
 * bodies of command substitutions. Pure; linear in its text, each sticky
 * match at its own place.
 */

export type Token = { op: string; mode?: string } | { word: Word };

export interface Lexed {
  tokens: Token[];
  /** Bodies of command substitutions, in order: they run as commands of their own. */
  subs: string[];
  /** A quote, substitution or expansion left open, or the budget spent: the line is not all read. */
  broken: boolean;
  /** Here-document bodies, by the index their `heredoc` token carries. */
  bodies: string[];
}

// Sticky (matched at lastIndex): a match never copies the rest of the line, which on a long hostile line would cost its square.
const HEREDOC_OP = /<<-?[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/y;
const DELIMITER = /[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/y;
const REDIRECT_OP = /<<<|<<-|<<|<>|<&|>>|>&|>\||<|>/y;
const PARAMETER = /[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]/y;
const FD_DIGITS = /[0-9]*-?/y;
/** Parts of one word worth expanding; past it the word is run-time (a hostile `$a$a$a…`). */
const MAX_PIECES = 256;

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

export function lex(src: string, budget?: Budget): Lexed {
  const tokens: Token[] = [];
  const subs: string[] = [];
  let broken = false;
  let word: Word | null = null;
  /** The word holds an unquoted `=` already (only its first can make it an assignment). */
  let equals = false;
  let heredocs: { delim: string; index: number }[] = [];
  const bodies: string[] = [];
  /** Here-document marks: tokens that do not count against the budget. */
  let marks = 0;
  /** The word has more parts than are worth expanding: it stays as the lexer marks it. */
  let crowded = false;
  /** Nothing of the word read yet (`""~` is not a tilde). */
  let fresh = false;
  const begin = () => {
    if (!word) fresh = true;
    return (word ??= { text: "", dynamic: false, assign: false });
  };
  const end = () => {
    if (word) tokens.push({ word });
    word = null;
    equals = false;
    crowded = false;
  };
  const part = (w: Word, p: Piece) => {
    if (crowded) return;
    if (w.pieces!.length >= MAX_PIECES) {
      w.pieces = [{ t: "opaque" }];
      crowded = true;
    } else w.pieces!.push(p);
  };
  /**
   * Literal text of the current word, quoted or not (an unquoted `{` may
   * open a brace expansion, a quoted one not). A word keeps its parts only
   * from its first expansion on: the text before it is one literal (a quote
   * there changes nothing, as a brace or tilde before would have been one).
   */
  const lit = (s: string, q: boolean) => {
    const w = begin();
    fresh = false;
    w.text += s;
    if (!w.pieces) return;
    const last = w.pieces[w.pieces.length - 1];
    if (!crowded && last?.t === "lit" && last.q === q) last.s += s;
    else part(w, { t: "lit", s, q });
  };
  const expansion = (p: Piece, visible = "") => {
    const w = begin();
    fresh = false;
    w.dynamic = true;
    w.pieces ??= w.text ? [{ t: "lit", s: w.text, q: true }] : [];
    w.text += visible;
    part(w, p);
  };
  /** Reads `$…` at i (the `$`), in double quotes or not; returns the index of its last character. */
  const dollar = (i: number, q: boolean): number => {
    const next = src[i + 1];
    if (next === "(") {
      const close = closingParen(src, i + 2);
      if (close === -1) broken = true;
      const stop = close === -1 ? src.length : close;
      if (src[i + 2] !== "(") {
        subs.push(src.slice(i + 2, stop));
        expansion({ t: "sub", s: src.slice(i + 2, stop), q });
      } else expansion({ t: "opaque" });
      return stop;
    }
    if (next === "{") {
      const close = src.indexOf("}", i + 2);
      if (close === -1) broken = true;
      const body = src.slice(i + 2, close === -1 ? src.length : close);
      expansion(
        /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*])$/.test(body) ? { t: "param", s: body, q } : { t: "opaque" },
      );
      return close === -1 ? src.length : close;
    }
    if (next === "'" && !q) {
      const close = src.indexOf("'", i + 2);
      if (close === -1) broken = true;
      const body = src.slice(i + 2, close === -1 ? src.length : close);
      if (body.includes("\\")) expansion({ t: "opaque" });
      lit(body, true);
      return close === -1 ? src.length : close;
    }
    const m = stickyExec(PARAMETER, src, i + 1);
    if (m) {
      if (crowded) begin().dynamic = true;
      else expansion({ t: "param", s: m[0], q });
      return i + m[0].length;
    }
    lit("$", q);
    return i;
  };
  const backtick = (i: number, q: boolean): number => {
    let j = i + 1;
    for (; j < src.length && src[j] !== "`"; j++) if (src[j] === "\\") j++;
    if (j >= src.length) broken = true;
    subs.push(src.slice(i + 1, j));
    expansion({ t: "sub", s: src.slice(i + 1, j), q });
    return j;
  };
  for (let i = 0; i < src.length; i++) {
    if (budget && tokens.length - marks >= budget.tokens) {
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
      // Here-document bodies are data, not commands: kept for the command that reads them.
      for (const { delim, index } of heredocs) {
        let j = i + 1;
        const start = j;
        for (;;) {
          const nl = src.indexOf("\n", j);
          const line = src.slice(j, nl === -1 ? src.length : nl);
          const at = j;
          j = nl === -1 ? src.length : nl + 1;
          if (line.replace(/^\t+/, "") === delim || nl === -1) {
            bodies[index] = src.slice(start, line.replace(/^\t+/, "") === delim ? at : src.length);
            break;
          }
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
      else if (i + 1 < src.length) lit(src[++i]!, true);
      continue;
    }
    if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close === -1) broken = true;
      lit(src.slice(i + 1, close === -1 ? src.length : close), true);
      i = close === -1 ? src.length : close;
      continue;
    }
    if (c === '"') {
      lit("", true);
      let j = i + 1;
      for (; j < src.length && src[j] !== '"'; j++) {
        const d = src[j]!;
        if (d === "\\" && /[$`"\\\n]/.test(src[j + 1] ?? "")) {
          if (src[j + 1] !== "\n") lit(src[j + 1]!, true);
          j++;
        } else if (d === "$") j = dollar(j, true);
        else if (d === "`") j = backtick(j, true);
        else lit(d, true);
      }
      if (j >= src.length) broken = true;
      i = j;
      continue;
    }
    if (c === "$") {
      i = dollar(i, false);
      continue;
    }
    if (c === "`") {
      i = backtick(i, false);
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
          heredocs.push({ delim: d[1] ?? d[2] ?? d[3]!, index: bodies.length });
          tokens.push({ op: "heredoc", mode: String(bodies.length) });
          marks++;
          bodies.push("");
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
    // ~ opening a word, or an assignment's value (f=~/x): the home folder.
    if (
      c === "~" &&
      (fresh || (w.assign && w.text.endsWith("=") && w.text.indexOf("=") === w.text.length - 1))
    ) {
      expansion({ t: "tilde" }, c);
      continue;
    }
    if ((c === "{" || c === "}") && !(w.text === "" && /[\s;&|]/.test(src[i + 1] ?? " "))) {
      expansion({ t: "brace", s: c }, c);
      continue;
    }
    if (c === "," && w.dynamic && w.pieces) {
      w.text += c;
      part(w, { t: "brace", s: c });
      continue;
    }
    if (c === "=" && !equals) {
      equals = true;
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.text) && !w.dynamic) w.assign = true;
    }
    lit(c, false);
  }
  end();
  if (budget) budget.tokens -= tokens.length - marks;
  return { tokens, subs, broken, bodies };
}
