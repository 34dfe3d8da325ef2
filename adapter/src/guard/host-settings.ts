import { posix } from "node:path";

/**
 * The files outside the checkout from which a client reads its hooks, or a
 * switch that turns them off (Claude Code's `disableAllHooks`, Codex's hook
 * trust, Gemini's folder trust, another plugin that runs after the guard's):
 * the user's and the machine's settings of the six clients. They are the
 * guard's own files as much as `.claude/settings.json` is: a named write is
 * refused (guard-file-writes.ts), any other change is caught after the call.
 *
 * Pure: resolved from the environment given (the hook's). Each client's
 * default place is listed even when a variable moves it, because a peer
 * session may run without that variable and read the default. A relative
 * or empty variable is ignored (the client would resolve it against a
 * directory the hook does not know). A folder ends with "/". A place the
 * sources leave uncertain is listed: it costs a stat, a missing one a guard.
 *
 * Sources: "measured" is a real client run here; "documented" is the
 * client's own documentation; "binary" is a string in the client's shipped
 * binary.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** An absolute, non-empty value of a variable, without trailing slashes; null otherwise. */
function dir(env: Env, name: string): string | null {
  const v = env[name];
  if (!v || !v.startsWith("/")) return null;
  return posix.normalize(v).replace(/(.)\/+$/, "$1");
}

/** The places under one client folder (several folders when a variable moves it), deduplicated. */
function under(dirs: (string | null)[], names: readonly string[]): string[] {
  const out: string[] = [];
  // posix.join keeps a folder's trailing slash.
  for (const d of dirs) if (d) for (const n of names) out.push(posix.join(d, n));
  return out;
}

export function userSettingsFiles(env: Env): string[] {
  const home = dir(env, "HOME");
  const inHome = (p: string) => (home ? posix.join(home, p) : null);
  const xdg = dir(env, "XDG_CONFIG_HOME");
  const out: string[] = [];

  // Claude Code: $CLAUDE_CONFIG_DIR, else ~/.claude. settings.json holds hooks and disableAllHooks, re-read
  // mid-session (measured on 2.1.197, 2.1.310, 2.1.330, 2.1.332); settings.local.json at user level is not
  // documented (listed in case); plugins/ holds installed plugins' hooks (documented). Cursor and Copilot CLI
  // read ~/.claude/settings.json too (documented). ~/.claude.json is left out: Claude Code rewrites it
  // itself during a session, so a watch on it would blame the agent for the client's own writes.
  out.push(
    ...under(
      [dir(env, "CLAUDE_CONFIG_DIR"), inHome(".claude")],
      ["settings.json", "settings.local.json", "plugins/"],
    ),
  );
  // Managed settings: managed-settings.json, the managed-settings.d/ drop-ins, managed-mcp.json (documented).
  out.push("/etc/claude-code/");

  // Codex: $CODEX_HOME, else ~/.codex. config.toml holds [hooks], the hooks' trust hashes and
  // features.codex_hooks (measured: a hook runs only once trusted there); hooks.json (binary, documented);
  // plugins/ with their hooks/hooks.json (binary: "plugins/cache/"). /etc/codex/ holds config.toml,
  // requirements.toml (managed hooks), managed_config.toml and hooks.json (binary).
  out.push(...under([dir(env, "CODEX_HOME"), inHome(".codex")], ["config.toml", "hooks.json", "plugins/"]));
  out.push("/etc/codex/");

  // Gemini CLI: $GEMINI_CLI_HOME stands for the home folder (documented). settings.json holds hooks and
  // hooksConfig (measured for the user file); trustedFolders.json decides whether the project's hooks load
  // at all (documented; moved by GEMINI_CLI_TRUSTED_FOLDERS_PATH); extensions/ bring their own hooks.
  // System settings and defaults in /etc/gemini-cli/, moved by GEMINI_CLI_SYSTEM_{SETTINGS,DEFAULTS}_PATH.
  const gemini = [dir(env, "GEMINI_CLI_HOME"), home].map((h) => (h ? posix.join(h, ".gemini") : null));
  out.push(...under(gemini, ["settings.json", "trustedFolders.json", "extensions/"]));
  for (const v of [
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
  ]) {
    const p = dir(env, v);
    if (p) out.push(p);
  }
  out.push("/etc/gemini-cli/");

  // Copilot CLI: $COPILOT_HOME, else ~/.copilot (documented); early versions used $XDG_CONFIG_HOME/.copilot.
  // settings.json holds inline hooks and disableAllHooks; hooks/*.json are user hooks; config.json held
  // user hooks and the trusted folders before 1.0.x moved them (documented); installed-plugins/ bring
  // hooks.json. Policy hooks in /etc/github-copilot/policy.d/ (documented).
  const copilot = [dir(env, "COPILOT_HOME"), inHome(".copilot"), xdg ? posix.join(xdg, ".copilot") : null];
  out.push(...under(copilot, ["settings.json", "config.json", "hooks/", "installed-plugins/"]));
  out.push("/etc/github-copilot/");

  // Cursor: ~/.cursor/hooks.json (documented; no variable moves it), enterprise /etc/cursor/hooks.json.
  out.push(...under([inHome(".cursor")], ["hooks.json"]), "/etc/cursor/hooks.json");

  // OpenCode: the global folder $XDG_CONFIG_HOME/opencode, else ~/.config/opencode, and $OPENCODE_CONFIG_DIR:
  // opencode.json(c) (config.json in older versions, measured by strace in its issue 3407), plugin/ and
  // plugins/ loaded in order (measured for the project folders); ~/.opencode/ is always scanned the same way
  // (its bin/ is the install, left out). $OPENCODE_CONFIG names one more file; the config files are looked
  // up from the working folder to the root, so ~/opencode.json(c) counts when a checkout lies under home.
  // Managed: /etc/opencode/ (documented).
  const opencode = [
    xdg ? posix.join(xdg, "opencode") : null,
    inHome(".config/opencode"),
    dir(env, "OPENCODE_CONFIG_DIR"),
    inHome(".opencode"),
  ];
  out.push(...under(opencode, ["opencode.json", "opencode.jsonc", "config.json", "plugin/", "plugins/"]));
  const single = dir(env, "OPENCODE_CONFIG");
  if (single) out.push(single);
  out.push(...under([home], ["opencode.json", "opencode.jsonc"]), "/etc/opencode/");

  return [...new Set(out)];
}
