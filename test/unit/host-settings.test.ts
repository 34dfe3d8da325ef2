import { describe, expect, it } from "vitest";
import { userSettingsFiles } from "../../adapter/src/guard/host-settings.js";

/**
 * Where the six clients read their hooks, or a switch that turns them off,
 * outside the checkout (issue 49, item 1): the list the hook refuses named
 * writes to and the watch puts back. Resolved from the hook's environment
 * only, each client's default place kept when a variable moves it.
 */

const HOME = "/home/ann";

describe("userSettingsFiles", () => {
  it("with HOME alone: every client's user settings and the machine's, absolute, folders ending in /", () => {
    const files = userSettingsFiles({ HOME });
    for (const expected of [
      // Claude Code (disableAllHooks re-read mid-session), and what Cursor and Copilot read of it too
      `${HOME}/.claude/settings.json`,
      `${HOME}/.claude/settings.local.json`,
      `${HOME}/.claude/plugins/`,
      "/etc/claude-code/",
      // Codex
      `${HOME}/.codex/config.toml`,
      `${HOME}/.codex/hooks.json`,
      "/etc/codex/",
      // Gemini CLI
      `${HOME}/.gemini/settings.json`,
      `${HOME}/.gemini/trustedFolders.json`,
      `${HOME}/.gemini/extensions/`,
      "/etc/gemini-cli/",
      // Copilot CLI
      `${HOME}/.copilot/settings.json`,
      `${HOME}/.copilot/config.json`,
      `${HOME}/.copilot/hooks/`,
      `${HOME}/.copilot/installed-plugins/`,
      "/etc/github-copilot/",
      // Cursor
      `${HOME}/.cursor/hooks.json`,
      "/etc/cursor/hooks.json",
      // OpenCode
      `${HOME}/.config/opencode/opencode.json`,
      `${HOME}/.config/opencode/opencode.jsonc`,
      `${HOME}/.config/opencode/plugin/`,
      `${HOME}/.config/opencode/plugins/`,
      `${HOME}/.opencode/plugins/`,
      `${HOME}/opencode.json`,
      "/etc/opencode/",
    ])
      expect(files, expected).toContain(expected);
    for (const f of files) expect(f.startsWith("/"), f).toBe(true);
    expect(new Set(files).size).toBe(files.length);
    // The install of OpenCode under ~/.opencode/bin is no settings file.
    expect(files).not.toContain(`${HOME}/.opencode/`);
  });

  it("the variables that move a client's folder add it; the default stays for a peer run without them", () => {
    const files = userSettingsFiles({
      HOME,
      CLAUDE_CONFIG_DIR: "/cfg/claude/",
      CODEX_HOME: "/cfg/codex",
      COPILOT_HOME: "/cfg/copilot",
      GEMINI_CLI_HOME: "/cfg/g",
      GEMINI_CLI_TRUSTED_FOLDERS_PATH: "/cfg/trust.json",
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: "/cfg/gemini-system.json",
      XDG_CONFIG_HOME: "/cfg/xdg",
      OPENCODE_CONFIG_DIR: "/cfg/oc",
      OPENCODE_CONFIG: "/cfg/oc.json",
    });
    for (const expected of [
      "/cfg/claude/settings.json",
      `${HOME}/.claude/settings.json`,
      "/cfg/codex/config.toml",
      "/cfg/codex/hooks.json",
      `${HOME}/.codex/hooks.json`,
      "/cfg/copilot/settings.json",
      "/cfg/copilot/hooks/",
      "/cfg/xdg/.copilot/settings.json",
      "/cfg/g/.gemini/settings.json",
      `${HOME}/.gemini/settings.json`,
      "/cfg/trust.json",
      "/cfg/gemini-system.json",
      "/cfg/xdg/opencode/opencode.json",
      "/cfg/xdg/opencode/plugins/",
      `${HOME}/.config/opencode/opencode.json`,
      "/cfg/oc/opencode.jsonc",
      "/cfg/oc/plugin/",
      "/cfg/oc.json",
    ])
      expect(files, expected).toContain(expected);
  });

  it("a relative or empty variable is ignored; without HOME only the machine's files remain", () => {
    const files = userSettingsFiles({ HOME: "", CLAUDE_CONFIG_DIR: "rel/claude", CODEX_HOME: "" });
    expect(files.some((f) => f.includes("rel/claude"))).toBe(false);
    expect(files.every((f) => f.startsWith("/etc/"))).toBe(true);
    expect(files).toContain("/etc/claude-code/");
  });
});
