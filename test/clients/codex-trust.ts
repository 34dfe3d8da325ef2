// Codex's two trust gates, written into a throwaway CODEX_HOME the way a
// person's "Trust all and continue" would (algorithm measured in
// docs/clients.md): the project's trust_level, and one
// [hooks.state."<abs hooks.json>:<label>:<group>:<handler>"] trusted_hash per
// declared hook.
import { readFileSync } from "node:fs";
import { declaredHooks } from "../../adapter/src/installer/trust.ts";

export interface HookTrust {
  key: string;
  hash: string;
}

/**
 * The trust key and hash of every command handler in a Codex hooks.json,
 * computed by the adapter's own trust module (the one `doctor` uses): when
 * the real Codex then runs the hooks, it has accepted those hashes, so this
 * suite checks the adapter's hashing against the real client.
 */
export function codexHookHashes(hooksJsonAbs: string): HookTrust[] {
  return declaredHooks(hooksJsonAbs, JSON.parse(readFileSync(hooksJsonAbs, "utf8"))).map(({ key, hash }) => ({
    key,
    hash,
  }));
}

const q = (s: string) => JSON.stringify(s);

export function codexConfigToml(opts: {
  modelBaseUrl: string;
  repoRoot: string;
  sandbox: "workspace-write" | "danger-full-access";
  hooks: HookTrust[];
}): string {
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
