/**
 * Secret redaction, applied by the adapter to every prompt, summary and plan
 * before it leaves the machine, and by the server to peer text it relays (a
 * release request's note). Free of zod: the hook bundle imports it. Patterns err on the side of redacting: a lost word
 * in a prompt costs less than a leaked credential.
 */

const SECRET_NAME = String.raw`[A-Za-z0-9_.-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?)[A-Za-z0-9_.-]*`;

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
    pattern: new RegExp(
      String.raw`\b(${SECRET_NAME})(\s*=\s*|"\s*:\s*)("[^"\n]*"|'[^'\n]*'|[^\s"',;]+)`,
      "gi",
    ),
    replace: (m, name, sep, value) =>
      value.startsWith("[REDACTED") || value.length < 4 ? m : `${name}${sep}[REDACTED:secret]`,
  },
];

/** Replaces secret-looking values with [REDACTED:kind]. */
export function redact(text: string): string {
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

/** Redacts every string inside a JSON value (an intent record, for one). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T;
  }
  return value;
}
