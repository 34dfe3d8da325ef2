/**
 * The adapter's self-exemption: the one shell command the guard never
 * blocks, so that the protocol cannot lock itself out. Only a whole,
 * unchained `node <path>/.cohent/cohent.mjs …` whose script is this
 * checkout's own adapter qualifies, and only with COHENT_* environment
 * prefixes holding inert values. Everything the shell would expand,
 * chain, redirect or substitute is refused rather than interpreted: a
 * command we cannot read exactly is not exempt.
 */

export type Exemption =
  { exempt: true; argv: string[]; env: Record<string, string> } | { exempt: false; why: string };

interface Word {
  text: string;
  /** Characters of the word before the first quote: where an assignment's NAME= must sit. */
  unquotedPrefix: string;
}

/** Characters allowed outside quotes. Anything else (; & | < > ( ) $ ` \ * ? [ ] { } ~ # ! newline …) refuses. */
const SAFE_UNQUOTED = /[A-Za-z0-9_\-./=:,@%+^]/;

/** The two quotes: a newline is refused inside either; inside double quotes also what the shell would expand. */
const QUOTES = new Map([
  ["'", { name: "single", refused: /[\n\r]/, reason: "a newline inside quotes" }],
  ['"', { name: "double", refused: /[$`\\!\n\r]/, reason: "an expansion or escape inside double quotes" }],
]);

function split(command: string): Word[] | string {
  const words: Word[] = [];
  let current: Word | null = null;
  let quoted = false;
  const begin = () => (current ??= { text: "", unquotedPrefix: "" });
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === " " || c === "\t") {
      if (current) words.push(current);
      current = null;
      quoted = false;
      continue;
    }
    const quote = QUOTES.get(c);
    if (quote) {
      const end = command.indexOf(c, i + 1);
      if (end === -1) return `an unterminated ${quote.name} quote`;
      const body = command.slice(i + 1, end);
      if (quote.refused.test(body)) return quote.reason;
      begin().text += body;
      quoted = true;
      i = end;
      continue;
    }
    if (!SAFE_UNQUOTED.test(c)) return `the shell character ${JSON.stringify(c)}`;
    const w = begin();
    w.text += c;
    if (!quoted) w.unquotedPrefix += c;
  }
  if (current) words.push(current);
  return words;
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
const INERT_VALUE = /^[A-Za-z0-9._:/@+,-]*$/;

export interface ExemptionContext {
  /** The shell's working directory (the hook payload's cwd). */
  cwd: string;
  /** The checkout root: the directory holding .cohent/. */
  repoRoot: string;
}

function resolvePosix(cwd: string, p: string): string {
  const parts = (p.startsWith("/") ? p : `${cwd}/${p}`).split("/");
  const out: string[] = [];
  for (const s of parts) {
    if (s === "" || s === ".") continue;
    if (s === "..") out.pop();
    else out.push(s);
  }
  return "/" + out.join("/");
}

/** Is this shell command the adapter's own, whole and unchained? Pure. */
export function parseExemptCommand(command: string, ctx: ExemptionContext): Exemption {
  if (typeof command !== "string" || command.trim() === "") return { exempt: false, why: "an empty command" };
  const words = split(command.trim());
  if (typeof words === "string") return { exempt: false, why: `the command contains ${words}` };
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length; i++) {
    const m = ASSIGNMENT.exec(words[i]!.unquotedPrefix);
    if (!m) break;
    const name = m[1]!;
    if (!/^COHENT_[A-Z0-9_]+$/.test(name))
      return { exempt: false, why: `the environment prefix ${name} is not a COHENT_* name` };
    const value = words[i]!.text.slice(name.length + 1);
    if (!INERT_VALUE.test(value)) return { exempt: false, why: `the value of ${name} is not inert` };
    env[name] = value;
  }
  const [program, script, ...argv] = words.slice(i).map((w) => w.text);
  if (program !== "node") return { exempt: false, why: "the command is not `node`" };
  if (!script || script.startsWith("-"))
    return { exempt: false, why: "node runs with options or without the adapter script" };
  const own = resolvePosix(ctx.repoRoot, ".cohent/cohent.mjs");
  if (resolvePosix(ctx.cwd, script) !== own)
    return { exempt: false, why: "the script is not this checkout's .cohent/cohent.mjs" };
  return { exempt: true, argv, env };
}
