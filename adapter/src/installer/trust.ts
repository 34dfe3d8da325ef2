import { parse as parseToml } from "smol-toml";
import { crypto } from "@cohent/client";

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
 * Codex hook trust, as measured (docs/clients.md): each hook handler is trusted by
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

/** The two tables of config.toml that trust reads. */
export interface CodexTrustStore {
  projects: Record<string, { trust_level?: string }>;
  hookState: Record<string, { trusted_hash?: string; enabled?: boolean }>;
}

const table = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * Reads trust out of Codex's config.toml with a maintained TOML parser
 * (smol-toml: doctor and init only, never on the hook's path). A file
 * that is not TOML trusts nothing: Codex cannot read it either.
 */
export function parseCodexTrust(toml: string): CodexTrustStore {
  const store: CodexTrustStore = { projects: {}, hookState: {} };
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(toml);
  } catch {
    return store;
  }
  for (const [path, entry] of Object.entries(table(doc.projects))) {
    const level = table(entry).trust_level;
    if (typeof level === "string") store.projects[path] = { trust_level: level };
  }
  for (const [key, entry] of Object.entries(table(table(doc.hooks).state))) {
    const { trusted_hash: hash, enabled } = table(entry);
    const state: CodexTrustStore["hookState"][string] = {};
    if (typeof hash === "string") state.trusted_hash = hash;
    if (typeof enabled === "boolean") state.enabled = enabled;
    if (Object.keys(state).length) store.hookState[key] = state;
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
