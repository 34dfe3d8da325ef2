import { crypto } from "@cohent/client/builtins.js";

/**
 * A hook handler of Cohent's: its command runs this checkout's adapter,
 * cohent.cjs since the hooks skip the ES module entry, cohent.mjs before.
 */
export function isCohentHook(command: unknown): command is string {
  return typeof command === "string" && /\.cohent\/cohent\.[cm]js\b/.test(command);
}

/** A hook handler of Cohent's: a command that runs the adapter, or Claude Code's mcp_tool handler of its server. */
export const isCohentHandler = (h: unknown): boolean =>
  !!h &&
  typeof h === "object" &&
  (isCohentHook((h as { command?: unknown }).command) ||
    ((h as { type?: unknown }).type === "mcp_tool" && (h as { server?: unknown }).server === "cohent"));

/**
 * Codex hook trust, as measured (FACTS.md): each hook handler is trusted by
 * a hash recorded in $CODEX_HOME/config.toml under
 * [hooks.state."<abs hooks.json>:<event label>:<group index>:<handler index>"].
 * Editing a hook changes its hash, and Codex then skips it silently.
 */

export const EVENT_LABELS: Record<string, string> = {
  SessionStart: "session_start",
  UserPromptSubmit: "user_prompt_submit",
  PreToolUse: "pre_tool_use",
  PostToolUse: "post_tool_use",
  Stop: "stop",
  PermissionRequest: "permission_request",
  PreCompact: "pre_compact",
  PostCompact: "post_compact",
};
const MATCHER_EVENTS = new Set(["pre_tool_use", "permission_request", "post_tool_use", "session_start"]);

/** JSON with keys sorted at every level and no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export interface HookHandler {
  type?: string;
  command?: string;
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
}

/** The pre-image Codex hashes for one handler of one matcher group. */
export function trustPreimage(label: string, matcher: string | undefined, handler: HookHandler): string {
  const h: Record<string, unknown> = {
    async: handler.async ?? false,
    command: handler.command ?? "",
    timeout: handler.timeout ?? 600,
    type: handler.type ?? "command",
  };
  if (handler.statusMessage !== undefined) h.statusMessage = handler.statusMessage;
  const doc: Record<string, unknown> = { event_name: label, hooks: [h] };
  if (matcher !== undefined && MATCHER_EVENTS.has(label)) doc.matcher = matcher;
  return canonicalJson(doc);
}

export function trustHash(label: string, matcher: string | undefined, handler: HookHandler): string {
  return (
    "sha256:" +
    crypto()
      .createHash("sha256")
      .update(trustPreimage(label, matcher, handler))
      .digest("hex")
  );
}

export interface DeclaredHook {
  key: string;
  event: string;
  label: string;
  matcher?: string;
  command: string;
  hash: string;
}

/** Every handler declared in a Codex hooks.json, with its trust key and expected hash. */
export function declaredHooks(
  hooksFile: string,
  config: { hooks?: Record<string, unknown> },
): DeclaredHook[] {
  const out: DeclaredHook[] = [];
  for (const [event, groups] of Object.entries(config.hooks ?? {})) {
    const label = EVENT_LABELS[event];
    if (!label || !Array.isArray(groups)) continue;
    groups.forEach((group: { matcher?: string; hooks?: HookHandler[] }, g) => {
      (group?.hooks ?? []).forEach((handler, h) => {
        if (handler?.type !== undefined && handler.type !== "command") return;
        out.push({
          key: `${hooksFile}:${label}:${g}:${h}`,
          event,
          label,
          ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
          command: handler.command ?? "",
          hash: trustHash(label, group.matcher, handler),
        });
      });
    });
  }
  return out;
}

/** The two tables of config.toml that trust reads, from a minimal line-based TOML reader. */
export interface CodexTrustStore {
  projects: Record<string, { trust_level?: string }>;
  hookState: Record<string, { trusted_hash?: string; enabled?: boolean }>;
}

function parseKeyPath(text: string): string[] | null {
  const parts: string[] = [];
  let i = 0;
  const s = text.trim();
  while (i < s.length) {
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === '"') {
      let out = "";
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === "\\") {
          const n = s[i + 1];
          out +=
            n === "n"
              ? "\n"
              : n === "t"
                ? "\t"
                : n === "u"
                  ? String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16))
                  : n;
          i += n === "u" ? 6 : 2;
        } else out += s[i++];
      }
      i++;
      parts.push(out);
    } else if (s[i] === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) return null;
      parts.push(s.slice(i + 1, end));
      i = end + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(s.slice(i));
      if (!m) return null;
      parts.push(m[0]);
      i += m[0].length;
    }
    while (s[i] === " " || s[i] === "\t") i++;
    if (i < s.length) {
      if (s[i] !== ".") return null;
      i++;
    }
  }
  return parts;
}

function parseValue(raw: string): string | boolean | undefined {
  const v = raw.trim().replace(/\s+#.*$/, "");
  if (v.startsWith('"')) return JSON.parse(v.slice(0, v.lastIndexOf('"') + 1));
  if (v.startsWith("'")) return v.slice(1, v.indexOf("'", 1));
  if (v === "true" || v === "false") return v === "true";
  return undefined;
}

export function parseCodexTrust(toml: string): CodexTrustStore {
  const store: CodexTrustStore = { projects: {}, hookState: {} };
  let table: string[] = [];
  for (const line of toml.split(/\r?\n/)) {
    const t = line.trim();
    if (t === "" || t.startsWith("#")) continue;
    const header = /^\[([^[\]]+)\]\s*(?:#.*)?$/.exec(t);
    if (header) {
      table = parseKeyPath(header[1]!) ?? [];
      continue;
    }
    if (t.startsWith("[[")) {
      table = [];
      continue;
    }
    const kv =
      /^((?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+)(?:\s*\.\s*(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=\s*(.+)$/.exec(
        t,
      );
    if (!kv) continue;
    const path = [...table, ...(parseKeyPath(kv[1]!) ?? [])];
    let value: string | boolean | undefined;
    try {
      value = parseValue(kv[2]!);
    } catch {
      continue;
    }
    const [a, b, c, d, e] = path;
    if (
      a === "projects" &&
      b !== undefined &&
      c === "trust_level" &&
      d === undefined &&
      typeof value === "string"
    )
      (store.projects[b] ??= {}).trust_level = value;
    if (a === "hooks" && b === "state" && c !== undefined && e === undefined) {
      if (d === "trusted_hash" && typeof value === "string") (store.hookState[c] ??= {}).trusted_hash = value;
      if (d === "enabled" && typeof value === "boolean") (store.hookState[c] ??= {}).enabled = value;
    }
  }
  return store;
}

export type HookTrust = "trusted" | "modified" | "untrusted" | "disabled";

export function hookTrust(hook: DeclaredHook, store: CodexTrustStore): HookTrust {
  const state = store.hookState[hook.key];
  if (state?.enabled === false) return "disabled";
  if (!state?.trusted_hash) return "untrusted";
  return state.trusted_hash === hook.hash ? "trusted" : "modified";
}
