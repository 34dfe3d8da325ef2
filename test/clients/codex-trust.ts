// Codex's two trust gates, written into a throwaway CODEX_HOME the way a
// person's "Trust all and continue" would (algorithm measured in
// shared/clients/FACTS.md): the project's trust_level, and one
// [hooks.state."<abs hooks.json>:<label>:<group>:<handler>"] trusted_hash per
// declared hook.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const LABELS: Record<string, string> = {
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
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

export interface HookTrust {
  key: string;
  hash: string;
}

/** The trust key and hash of every command handler in a Codex hooks.json. */
export function codexHookHashes(hooksJsonAbs: string): HookTrust[] {
  const cfg = JSON.parse(readFileSync(hooksJsonAbs, "utf8")) as { hooks?: Record<string, { matcher?: string; hooks?: any[] }[]> };
  const out: HookTrust[] = [];
  for (const [event, groups] of Object.entries(cfg.hooks ?? {})) {
    const label = LABELS[event];
    if (!label) continue;
    groups.forEach((g, gi) => {
      (g.hooks ?? []).forEach((h, hi) => {
        const handler: Record<string, unknown> = { async: !!h.async, command: h.command, timeout: h.timeout ?? 600, type: h.type ?? "command" };
        if (h.statusMessage !== undefined) handler.statusMessage = h.statusMessage;
        const doc: Record<string, unknown> = { event_name: label, hooks: [handler] };
        if (MATCHER_EVENTS.has(label) && g.matcher !== undefined) doc.matcher = g.matcher;
        out.push({ key: `${hooksJsonAbs}:${label}:${gi}:${hi}`, hash: "sha256:" + createHash("sha256").update(canonicalJson(doc)).digest("hex") });
      });
    });
  }
  return out;
}

const q = (s: string) => JSON.stringify(s);

export function codexConfigToml(opts: { modelBaseUrl: string; repoRoot: string; sandbox: "workspace-write" | "danger-full-access"; hooks: HookTrust[] }): string {
  const lines = [
    `model = "gpt-5.5"`,
    `model_provider = "fake"`,
    `approval_policy = "never"`,
    `sandbox_mode = ${q(opts.sandbox)}`,
    `check_for_update_on_startup = false`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[features]`,
    `plugins = false`,
    `apps = false`,
    ``,
    `[model_providers.fake]`,
    `name = "fake"`,
    `base_url = ${q(opts.modelBaseUrl)}`,
    `env_key = "FAKE_OPENAI_API_KEY"`,
    `wire_api = "responses"`,
    ``,
    `[projects.${q(opts.repoRoot)}]`,
    `trust_level = "trusted"`,
    ``,
  ];
  for (const h of opts.hooks) lines.push(`[hooks.state.${q(h.key)}]`, `trusted_hash = ${q(h.hash)}`, ``);
  return lines.join("\n");
}
