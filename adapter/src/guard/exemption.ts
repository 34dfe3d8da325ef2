/**
 * The adapter's self-exemption: the one shell command the guard never
 * blocks, so that the protocol cannot lock itself out. Only a whole,
 * unchained `node <path>/.cohent/cohent.mjs …` whose script is this
 * checkout's own adapter qualifies, and only with environment prefixes
 * from PREFIXES below holding inert values. Everything the shell would
 * expand, chain, redirect or substitute is refused rather than
 * interpreted: a command we cannot read exactly is not exempt.
 */

export type Exemption =
  | { exempt: true; argv: string[]; env: Record<string, string> }
  | {
      exempt: false;
      why: string;
      /** The refused environment name, when the command is otherwise the adapter's own: the deny names it. */
      prefix?: string;
    };

/** What a COHENT_* name changes when it prefixes the adapter's command: only an inert one keeps the exemption. */
export type PrefixEffect = "inert" | "identity" | "credential" | "target" | "code path";

export interface PrefixRule {
  effect: PrefixEffect;
  /** Why, in the words a refusal uses ("it changes …"). */
  why: string;
  /** An inert name's values: anything else is refused too (a deadline of a year is not a deadline). */
  value?: (value: string, ctx: ExemptionContext) => boolean;
}

/** A timing knob a command may carry: whole milliseconds, at most 999,999 (under 17 minutes). */
const MILLISECONDS = (v: string) => /^\d{1,6}$/.test(v);

/**
 * Every COHENT_* name the adapter knows (read from the environment or
 * defined at build time), and how it goes as a prefix of the adapter's own
 * command. The exempt command skips the kill switch, so only a name that
 * changes no identity, credential, target or code path keeps it; an unknown
 * name is refused. test/adapter/exemption-names.test.ts fails when the
 * adapter's sources name a COHENT_* variable this table does not classify.
 */
export const PREFIXES: Readonly<Record<string, PrefixRule>> = {
  COHENT_TIMEOUT_MS: {
    effect: "inert",
    why: "the command's HTTP timeout",
    value: MILLISECONDS,
  },
  COHENT_HOOK_DEADLINE_MS: {
    effect: "inert",
    why: "the deadline of a hook run (the command is not one)",
    value: MILLISECONDS,
  },
  COHENT_PLUGIN_TIMEOUT_MS: {
    effect: "inert",
    why: "the OpenCode plugin's own deadline (read by the plugin, not by the command)",
    value: MILLISECONDS,
  },
  COHENT_POLL_EVERY_MS: {
    effect: "inert",
    why: "the hook guard's poll interval (the command does not guard)",
    value: MILLISECONDS,
  },
  COHENT_CODE_CACHE: {
    effect: "inert",
    why: "whether V8's compile cache of the same bundle is used (0/false/off/no turn it off; no path)",
  },
  COHENT_WARM: {
    effect: "inert",
    why: "whether a hook call may be answered by the warm guard (the command is not a hook call)",
    value: (v) => /^[01]$/.test(v),
  },
  COHENT_WARM_IDLE_MS: {
    effect: "inert",
    why: "how long an idle warm guard lives (read by the guard, not by the command)",
    value: MILLISECONDS,
  },
  COHENT_SESSION: {
    effect: "identity",
    why: "the session the command acts for; only the calling session's own id is inert",
    value: (v, ctx) => ctx.sessionId !== undefined && v === ctx.sessionId,
  },
  COHENT_AGENT_TOKEN: { effect: "credential", why: "the credential the command uses" },
  COHENT_CLIENT: { effect: "identity", why: "the client the command reports itself as" },
  COHENT_ROOT: { effect: "target", why: "the checkout (project, session, credential) the command acts on" },
  COHENT_USAGE_LOG: { effect: "target", why: "a file the command writes" },
  COHENT_TRANSPORT: { effect: "code path", why: "the HTTP transport the command uses" },
  // Build-time constants, never read from the environment: refused all the same, being code by name.
  COHENT_BUNDLE_HEAD: {
    effect: "code path",
    why: "the first line of the adapter's code file (a build constant)",
  },
  COHENT_BUNDLE_LENGTH: {
    effect: "code path",
    why: "the length of the adapter's code file (a build constant)",
  },
  COHENT_BUNDLE_HASH: { effect: "code path", why: "the adapter's code cache key (a build constant)" },
  COHENT_SCHEMAS: { effect: "code path", why: "the MCP file's schemas (a build constant)" },
  COHENT_VERSION: { effect: "identity", why: "the adapter version it announces (a build constant)" },
};

/** What a deny adds when the command would have been the adapter's own but for its prefix. */
export const notExemptNote = (why: string) =>
  `Cohent's own command is exempt from this, but not as sent: ${why}. Run it without that prefix.`;

/** Whether `NAME=value` keeps the exemption: null when it does, else why not. */
export function prefixRefusal(name: string, value: string, ctx: ExemptionContext): string | null {
  const rule = Object.hasOwn(PREFIXES, name) ? PREFIXES[name]! : null;
  if (!rule) return `${name} is not one of the adapter's inert names`;
  if (rule.effect === "inert")
    return !rule.value || rule.value(value, ctx) ? null : `${name}=${value} is out of its range`;
  if (rule.value?.(value, ctx)) return null;
  return `${name} changes ${rule.why}`;
}

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
  /** The calling session's own id (the hook payload's): COHENT_SESSION naming it changes nothing. */
  sessionId?: string;
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
  let refused: { name: string; why: string } | null = null;
  let i = 0;
  for (; i < words.length; i++) {
    const m = ASSIGNMENT.exec(words[i]!.unquotedPrefix);
    if (!m) break;
    const name = m[1]!;
    if (!/^COHENT_[A-Z0-9_]+$/.test(name))
      return { exempt: false, why: `the environment prefix ${name} is not a COHENT_* name` };
    const value = words[i]!.text.slice(name.length + 1);
    if (!INERT_VALUE.test(value)) return { exempt: false, why: `the value of ${name} is not inert` };
    const why = prefixRefusal(name, value, ctx);
    // The first refusal, reported once the rest proves to be the adapter's command.
    if (why) refused ??= { name, why };
    env[name] = value;
  }
  const [program, script, ...argv] = words.slice(i).map((w) => w.text);
  if (program !== "node") return { exempt: false, why: "the command is not `node`" };
  if (!script || script.startsWith("-"))
    return { exempt: false, why: "node runs with options or without the adapter script" };
  const own = resolvePosix(ctx.repoRoot, ".cohent/cohent.mjs");
  if (resolvePosix(ctx.cwd, script) !== own)
    return { exempt: false, why: "the script is not this checkout's .cohent/cohent.mjs" };
  if (refused) return { exempt: false, why: `the environment prefix ${refused.why}`, prefix: refused.name };
  return { exempt: true, argv, env };
}
