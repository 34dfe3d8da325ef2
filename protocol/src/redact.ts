/**
 * Secret redaction, applied by the adapter to every prompt, summary and plan
 * before it leaves the machine, and by the server to every free text it
 * stores or renders, whoever sent it (backend operations/shared/free-text).
 * Free of zod: the hook bundle imports it. Patterns err on the side of
 * redacting: a lost word in a prompt costs less than a leaked credential.
 * Idempotent: text already redacted passes through unchanged. Linear in the
 * text: every pattern scans a bounded neighbourhood per position.
 */

/** The characters of a variable or key name, and the words that make one a secret's. */
const NAME_CHARS = "A-Za-z0-9_.-";
const SECRET_WORD = "SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?";
/**
 * A whole name holding a secret word. Linear: the name starts only where a
 * run of name characters starts (the lookbehind), the lookahead finds the
 * word inside that run, and the run is then taken whole. The old form,
 * `\b[chars]*WORD[chars]*`, could start at every `.` or `-` of a run and
 * split it at every word inside: cubic, 200 ms for 2,000 characters of
 * `token.token.…` and about two minutes for a 16,000-character prompt.
 */
const SECRET_NAME = String.raw`(?<![${NAME_CHARS}])(?=[${NAME_CHARS}]*?(?:${SECRET_WORD}))[${NAME_CHARS}]+`;

/** A value that is nothing but markers, quoted or not (the adapter's, or an earlier pass's): left as it is. */
const isRedacted = (value: string) => /^(["']?)(?:\[REDACTED:[a-z-]+\])+\1$/.test(value);

const RULES: { kind: string; pattern: RegExp; replace?: (m: string, ...groups: string[]) => string }[] = [
  {
    kind: "private-key",
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  {
    kind: "bearer",
    pattern: /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
    replace: (_m, b) => `${b} [REDACTED:bearer]`,
  },
  { kind: "github", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { kind: "anthropic", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { kind: "openai", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "aws", pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g },
  {
    kind: "slack",
    pattern:
      /\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}|https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/]+/g,
  },
  { kind: "cohent", pattern: /\bcoh_[A-Za-z0-9_-]{20,}/g },
  {
    kind: "assignment",
    // NAME=value (env files, shells) and "name": "value" (JSON); prose such as "token: it expires" stays.
    pattern: new RegExp(String.raw`(${SECRET_NAME})(\s*=\s*|"\s*:\s*)("[^"\n]*"|'[^'\n]*'|[^\s"',;]+)`, "gi"),
    // A quoted value keeps its quotes: the marker then stays one value, never merging with the text after it.
    replace: (m, name, sep, value) => {
      if (isRedacted(value) || value.length < 4) return m;
      const quote = /^["']/.test(value) ? value[0] : "";
      return `${name}${sep}${quote}[REDACTED:secret]${quote}`;
    },
  },
];

/**
 * One marker can complete another secret's shape: an AWS key runs into a
 * Slack URL with no word boundary between them until the URL is a marker.
 * So the rules run again while a pass changes anything, a few times at most
 * (each pass is linear; real text settles in one or two).
 */
const MAX_PASSES = 4;

function pass(text: string): string {
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (m: string, ...groups: unknown[]) =>
      rule.replace
        ? rule.replace(m, ...(groups.filter((g) => typeof g === "string") as string[]))
        : `[REDACTED:${rule.kind}]`,
    );
  }
  return out;
}

/** Replaces secret-looking values with [REDACTED:kind]. */
export function redact(text: string): string {
  let out = text;
  for (let i = 0; i < MAX_PASSES; i++) {
    const next = pass(out);
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Redacts every string inside a JSON value (an intent record, for one). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T;
  }
  return value;
}
