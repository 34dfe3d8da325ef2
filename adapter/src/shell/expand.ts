import type { Redirect, Word } from "./reader.js";

/**
 * What a shell expands before it runs a command, where the line itself
 * decides it: `$PWD`, `$(pwd)` and `~` (the directory and the home folder),
 * brace expansion (`src/{a,b}.ts`, `{1..3}`), variables the same line
 * assigned (`f=a.ts; … $f`, a `for` word list, `sh -c '…' _ a.ts`), and a
 * command substitution whose output the line shows (`$(echo a)`,
 * `$(cat <<'EOF' … EOF)`). What the line does not decide (the environment,
 * a file's content, another program's output) stays a run-time word. Pure.
 */

/** One part of a word as the lexer read it: quoted or not, literal or an expansion. */
export type Piece =
  | { t: "lit"; s: string; q: boolean }
  /** An unquoted `{`, `,` or `}`: brace expansion, when they pair up. */
  | { t: "brace"; s: string }
  | { t: "param"; s: string; q: boolean }
  | { t: "sub"; s: string; q: boolean }
  /** An unquoted `~` opening the word (or an assignment's value). */
  | { t: "tilde" }
  /** An expansion this reader does not evaluate (`${X:-y}`, `$((…))`, `$'\n'`). */
  | { t: "opaque" };

/** A variable's values: one, several (a `for` word list: the command runs once for each), or null when the line cannot tell. */
export type Vars = ReadonlyMap<string, readonly string[] | null>;

/** What the caller knows beyond the line: the home folder (the hook's HOME), the checkout's root (`git rev-parse --show-toplevel`). */
export interface ShellEnv {
  home?: string | null;
  root?: string | null;
  /** Variables set before this line (a nested script's caller, `sh -c '…' _ a b`'s positional ones). */
  vars?: Vars;
}

export interface Scope {
  cwd: string | null;
  env: ShellEnv;
  vars: Vars;
  /** The output of a command substitution's body run in `cwd`, when the line decides it; else null. */
  sub: (body: string, cwd: string | null) => string | null;
}

/** Words one brace expansion may make (`{1..100000}` is not read). */
const MAX_BRACE = 256;
/** Copies of a command a `for` variable may make (each value a run of its own). */
const MAX_RUNS = 64;
/** Variables a line may set: past it, new ones are unknown. */
export const MAX_VARS = 64;
const SPECIAL = new Set(["@", "*"]);

// ---- Brace expansion -------------------------------------------------------

function range(text: string): string[] | null {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(text);
  if (!m) return null;
  const [, a, b, s] = m as unknown as [string, string, string, string | undefined];
  const step = Math.abs(Number(s ?? 1)) || 1;
  const numeric = /\d/.test(a);
  if (numeric !== /\d/.test(b)) return null;
  const from = numeric ? Number(a) : a.charCodeAt(0);
  const to = numeric ? Number(b) : b.charCodeAt(0);
  if (Math.abs(to - from) / step >= MAX_BRACE) return null;
  const pad = numeric && (/^-?0\d/.test(a) || /^-?0\d/.test(b)) ? Math.max(a.length, b.length) : 0;
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
    if (!numeric) out.push(String.fromCharCode(v));
    else {
      const digits = String(Math.abs(v)).padStart(pad - (v < 0 ? 1 : 0), "0");
      out.push(v < 0 ? "-" + digits : digits);
    }
  }
  return out;
}

/** The words a brace expansion makes of these pieces (bash's order), or null past MAX_BRACE. */
export function braces(pieces: Piece[]): Piece[][] | null {
  for (let i = 0; i < pieces.length; i++) {
    const open = pieces[i]!;
    if (open.t !== "brace" || open.s !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let j = i + 1; j < pieces.length && close === -1; j++) {
      const p = pieces[j]!;
      if (p.t !== "brace") continue;
      if (p.s === "{") depth++;
      else if (p.s === "}" && depth-- === 0) close = j;
      else if (p.s === "," && depth === 0) commas.push(j);
    }
    if (close === -1) continue;
    const inner = pieces.slice(i + 1, close);
    let alternatives: Piece[][] = [];
    if (commas.length) {
      let from = i + 1;
      for (const c of [...commas, close]) {
        alternatives.push(pieces.slice(from, c));
        from = c + 1;
      }
    } else {
      const seq = inner.every((p) => p.t === "lit")
        ? range(inner.map((p) => (p as { s: string }).s).join(""))
        : null;
      if (!seq) continue; // `{}`, `{a}`: literal braces
      alternatives = seq.map((s) => [{ t: "lit", s, q: true }]);
    }
    const before = pieces.slice(0, i);
    const after = pieces.slice(close + 1);
    const out: Piece[][] = [];
    for (const alt of alternatives) {
      const more = braces([...before, ...alt, ...after]);
      if (!more || out.length + more.length > MAX_BRACE) return null;
      out.push(...more);
    }
    return out;
  }
  return [pieces];
}

// ---- Parameters and substitutions -----------------------------------------

/** A variable's values in this scope: PWD follows `cd`, HOME is the hook's unless the line set it. */
function lookup(name: string, scope: Scope): readonly string[] | null {
  if (name === "PWD") return scope.cwd === null ? null : [scope.cwd];
  if (scope.vars.has(name)) return scope.vars.get(name)!;
  if (name === "HOME" && scope.env.home) return [scope.env.home];
  return null;
}

interface Fragment {
  s: string;
  /** An unquoted expansion's value: split into words at white space. */
  split: boolean;
}

/**
 * One brace-expanded word's pieces with their values: fragments, or the
 * visible text (the literal parts, as the lexer kept it) when a piece has
 * no value here.
 */
function substitute(pieces: Piece[], scope: Scope, bind: ReadonlyMap<string, string>): Fragment[] | string {
  const out: Fragment[] = [];
  let known = true;
  let visible = "";
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    let value: string | null = null;
    if (p.t === "lit" || p.t === "brace") {
      out.push({ s: p.s, split: false });
      visible += p.s;
      continue;
    }
    if (p.t === "tilde") {
      const next = pieces[i + 1];
      // The tilde-prefix runs to the first unquoted slash; a quoted or expanded one is not a user name.
      const rest = next?.t === "lit" && !next.q ? next.s : "";
      const slash = rest.indexOf("/");
      const user = !next
        ? ""
        : next.t === "lit" && !next.q
          ? slash === -1
            ? rest
            : rest.slice(0, slash)
          : null;
      value = user === "" ? (lookup("HOME", scope)?.[0] ?? null) : user === "+" ? scope.cwd : null;
      if (value !== null && user && next?.t === "lit")
        pieces = [...pieces.slice(0, i + 1), { ...next, s: rest.slice(user.length) }, ...pieces.slice(i + 2)];
      visible += "~";
      if (value === null) known = false;
      else out.push({ s: value, split: false });
      continue;
    }
    if (p.t === "param") {
      const bound = bind.get(p.s);
      const v = bound !== undefined ? [bound] : lookup(p.s, scope);
      value = v && v.length === 1 ? v[0]! : null;
    } else if (p.t === "sub") value = scope.sub(p.s, scope.cwd);
    if (value === null) known = false;
    else out.push({ s: value, split: !("q" in p && p.q) });
  }
  return known ? out : visible;
}

/** The words of one brace-expanded word: split at white space where an unquoted expansion put it. */
function split(frags: Fragment[], assign: boolean): string[] {
  const out: string[] = [];
  let cur = "";
  // A word is under way, even an empty one (`""`); an unquoted expansion that is empty and alone makes none (`rm $EMPTY`).
  let open = false;
  for (const f of frags) {
    if (!f.split || assign) {
      cur += f.s;
      open = true;
      continue;
    }
    const parts = f.s.split(/[ \t\n]+/);
    for (let k = 0; k < parts.length; k++) {
      if (k > 0 && open) {
        out.push(cur);
        cur = "";
        open = false;
      }
      if (parts[k]) {
        cur += parts[k];
        open = true;
      }
    }
  }
  if (open) out.push(cur);
  return out;
}

/** Whether a word still holds literal braces after expansion (`{}`, `stash@{0}`): kept as the lexer marked it. */
const leftBraces = (pieces: Piece[]) => pieces.some((p) => p.t === "brace" && p.s !== ",");

/**
 * The words a word becomes: itself when static; else its brace expansion
 * with each expansion's value, a word still run-time (dynamic, its visible
 * text) where a value is not known here. `bind` gives a `for` variable's
 * value for this run.
 */
export function expandWord(w: Word, scope: Scope, bind: ReadonlyMap<string, string> = new Map()): Word[] {
  if (!w.dynamic || !w.pieces) return [w];
  const assign = w.assign;
  // An assignment's value is neither brace-expanded nor split.
  const alternatives = assign ? [w.pieces] : braces(w.pieces);
  if (!alternatives) return [w];
  const out: Word[] = [];
  for (const alt of alternatives) {
    const frags = substitute(alt, scope, bind);
    if (typeof frags === "string" || leftBraces(alt)) {
      const visible = typeof frags === "string" ? frags : frags.map((f) => f.s).join("");
      out.push({ text: visible, dynamic: true, assign, pieces: alt });
      continue;
    }
    for (const text of split(frags, assign)) out.push({ text, dynamic: false, assign });
  }
  return out;
}

/** The parameters a word names. */
function params(w: Word, into: Set<string>): void {
  for (const p of w.pieces ?? []) if (p.t === "param") into.add(p.s);
}

/**
 * A command's words and redirections as the shell runs them: once per value
 * of each `for` variable it names (bounded by MAX_RUNS, past which those
 * variables are unknown), each word expanded.
 */
export function expandCommand(
  words: Word[],
  redirects: Redirect[],
  scope: Scope,
): { words: Word[]; redirects: Redirect[] }[] {
  if (!words.some((w) => w.dynamic) && !redirects.some((r) => r.target.dynamic))
    return [{ words, redirects }];
  const names = new Set<string>();
  for (const w of words) params(w, names);
  for (const r of redirects) params(r.target, names);
  let binds: Map<string, string>[] = [new Map()];
  for (const n of names) {
    const v = SPECIAL.has(n) ? null : lookup(n, scope);
    if (!v || v.length < 2) continue;
    if (binds.length * v.length > MAX_RUNS) {
      scope = { ...scope, vars: new Map(scope.vars).set(n, null) };
      continue;
    }
    binds = binds.flatMap((b) => v.map((x) => new Map(b).set(n, x)));
  }
  return binds.map((bind) => ({
    words: words.flatMap((w) => (SPECIAL.has(positional(w)) ? spread(w, scope) : expandWord(w, scope, bind))),
    redirects: redirects.map((r) => ({ ...r, target: expandWord(r.target, scope, bind)[0] ?? r.target })),
  }));
}

/** `"$@"` alone: the name, or "". */
function positional(w: Word): string {
  const p = w.pieces;
  return p && p.length === 1 && p[0]!.t === "param" ? p[0]!.s : "";
}

/** `"$@"` / `$*`: one word per positional parameter, when the line set them. */
function spread(w: Word, scope: Scope): Word[] {
  const v = scope.vars.get("@");
  return v ? v.map((text) => ({ text, dynamic: false, assign: false })) : [w];
}

/** An assignment's values (`f=src/$x.ts`, one per value of a `for` variable it names), or null when unknown. */
export function assignedValues(w: Word, scope: Scope): string[] | null {
  const runs = expandCommand([w], [], scope);
  const out: string[] = [];
  for (const r of runs) {
    const v = r.words[0];
    if (!v || v.dynamic) return null;
    out.push(v.text.slice(v.text.indexOf("=") + 1));
  }
  return out;
}

/** A `sh -c 'script' name a b` script's positional parameters. */
export function positionalVars(args: Word[], vars: Vars): Vars {
  const out = new Map(vars);
  const known = args.every((w) => !w.dynamic);
  args.forEach((w, i) => out.set(String(i), w.dynamic ? null : [w.text]));
  out.set("@", known ? args.slice(1).map((w) => w.text) : null);
  return out;
}

/** Builtins that set variables from their words (`export F=x`). */
const DECLARE = new Set(["export", "declare", "typeset", "local", "readonly"]);
/** Builtins that set variables from input: unknown afterwards. */
const READ_VARS = new Set(["read", "mapfile", "readarray", "unset", "getopts"]);

/**
 * The variables after a command: `f=x`, `export f=x`, a `for f in …` header
 * (each value a run), `read f` (unknown). Null when it sets none.
 */
export function varsAfter(words: Word[], scope: Scope): Vars | null {
  const first = words[0];
  if (!first) return null;
  const t = first.text;
  const sets =
    (first.assign && words.every((w) => w.assign)) ||
    (!first.dynamic && (DECLARE.has(t) || READ_VARS.has(t) || t === "for" || t === "select"));
  if (!sets) return null;
  const next = new Map(scope.vars);
  const set = (name: string, v: readonly string[] | null) => {
    if (next.size < MAX_VARS || next.has(name)) next.set(name, v);
  };
  if (first.assign && words.every((w) => w.assign)) {
    for (const w of words) set(w.text.slice(0, w.text.indexOf("=")), assignedValues(w, scope));
    return next;
  }
  if (first.dynamic) return null;
  if (DECLARE.has(first.text)) {
    for (const w of words.slice(1))
      if (w.assign) set(w.text.slice(0, w.text.indexOf("=")), assignedValues(w, scope));
    return next;
  }
  if (READ_VARS.has(first.text)) {
    for (const w of words.slice(1)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.text)) set(w.text, null);
    return next;
  }
  if (
    (first.text === "for" || first.text === "select") &&
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(words[1]?.text ?? "")
  ) {
    const name = words[1]!.text;
    if (words[2]?.text !== "in") {
      set(name, scope.vars.get("@") ?? null);
      return next;
    }
    const list: string[] = [];
    let known = true;
    for (const run of expandCommand(words.slice(3), [], scope))
      for (const w of run.words) {
        if (w.dynamic) known = false;
        else list.push(w.text);
      }
    set(name, known && list.length ? list : null);
    return next;
  }
  return null;
}
