import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { WiringChange } from "@cohent/protocol";
import { GUARD_FILES } from "../../adapter/src/guard/guard-files.js";
import { ADAPTER_FILES, init } from "../../adapter/src/installer/init.js";
import { checkedPaths, describeChanges, wiringChanges } from "../../adapter/src/installer/wiring.js";

/**
 * The wiring fingerprint as a table: the files init writes (into a scratch
 * folder, from a stand-in bundle, with the MCP entries), one change each,
 * and what the check says. A person's unrelated settings say nothing.
 */

type Files = Map<string, string>;

/** What init writes, read back as a map of repo-relative paths. */
function initialized(): { root: string; files: Files } {
  const base = mkdtempSync(path.join(os.tmpdir(), "cohent-wiring-"));
  const built = path.join(base, "built");
  mkdirSync(built);
  for (const n of ADAPTER_FILES) writeFileSync(path.join(built, n), `// ${n} stand-in\n`);
  const root = path.join(base, "repo");
  mkdirSync(root);
  init({
    cwd: root,
    server: "http://127.0.0.1:1",
    repo: "acme/shop",
    bundle: path.join(built, "cohent.mjs"),
    mcpWrite: true,
  });
  const files: Files = new Map();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(path.relative(root, p), readFileSync(p, "utf8"));
    }
  };
  walk(root);
  return { root, files };
}

const changesOf = (root: string, files: Files) =>
  wiringChanges(
    (rel) => (files.has(rel) ? Buffer.from(files.get(rel)!, "utf8") : null),
    root,
    undefined,
    (dir) => {
      const names = [...files.keys()]
        .filter((f) => f.startsWith(dir) && !f.slice(dir.length).includes("/"))
        .map((f) => f.slice(dir.length));
      return names.length ? names.sort() : null;
    },
  );

const json = (files: Files, rel: string, edit: (o: any) => void) => {
  const o = JSON.parse(files.get(rel) ?? "{}");
  edit(o);
  files.set(rel, JSON.stringify(o, null, 2) + "\n");
};

const CLAUDE = ".claude/settings.json";
const CODEX = ".codex/hooks.json";
const COPILOT = ".github/hooks/cohent.json";
const GEMINI = ".gemini/settings.json";
const CURSOR = ".cursor/hooks.json";
const PLUGIN = ".opencode/plugin/cohent.js";

const CASES: { name: string; edit: (f: Files, root: string) => void; expect: [string, string][] | null }[] = [
  { name: "as init wrote it", edit: () => {}, expect: [] },
  {
    name: "unrelated Claude settings: permissions, env, another tool's hooks (own group and ours)",
    edit: (f) =>
      json(f, CLAUDE, (o) => {
        o.permissions = { allow: ["Bash(npm test)"] };
        o.env = { FOO: "1" };
        o.hooks.PreToolUse.push({ matcher: "Bash", hooks: [{ type: "command", command: "lint-hook" }] });
        o.hooks.Stop[0].hooks.push({ type: "command", command: "notify-me" });
        o.hooks.Notification = [{ hooks: [{ type: "command", command: "say done" }] }];
      }),
    expect: [],
  },
  {
    name: "reformatted: other indentation, keys in another order",
    edit: (f) => {
      const o = JSON.parse(f.get(CODEX)!);
      const pre = o.hooks.PreToolUse[0];
      pre.hooks[0] = Object.fromEntries(Object.entries(pre.hooks[0]).reverse());
      f.set(CODEX, JSON.stringify(o, null, 4));
    },
    expect: [],
  },
  {
    name: "an unrelated Codex setting and a second MCP server",
    edit: (f) => {
      json(f, CODEX, (o) => (o.note = "ours"));
      json(f, ".mcp.json", (o) => (o.mcpServers.github = { command: "gh-mcp" }));
      f.set(".codex/config.toml", f.get(".codex/config.toml") + '\n[mcp_servers.other]\ncommand = "x"\n');
    },
    expect: [],
  },
  {
    name: "settings.local.json with unrelated settings",
    edit: (f) => f.set(".claude/settings.local.json", JSON.stringify({ permissions: { allow: ["Read"] } })),
    expect: [],
  },
  {
    name: "text outside AGENTS.md's managed section",
    edit: (f) =>
      f.set("AGENTS.md", "# Our rules\n\nBe nice.\n\n" + f.get("AGENTS.md")! + "\nMore of ours.\n"),
    expect: [],
  },
  {
    name: "Codex's MCP entry naming this adapter at another checkout's path (a clone elsewhere)",
    edit: (f, root) =>
      f.set(".codex/config.toml", f.get(".codex/config.toml")!.split(root).join("/home/other/shop")),
    expect: [],
  },
  {
    name: "Claude PreToolUse entry removed",
    edit: (f) => json(f, CLAUDE, (o) => o.hooks.PreToolUse.splice(0, 1)),
    expect: [[CLAUDE, "hook entry PreToolUse removed"]],
  },
  {
    name: "Claude PreToolUse command changed (still runs the adapter)",
    edit: (f) =>
      json(
        f,
        CLAUDE,
        (o) =>
          (o.hooks.PreToolUse[0].hooks[1].command =
            'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.cjs" hook || true'),
      ),
    expect: [[CLAUDE, "hook entry PreToolUse command changed"]],
  },
  {
    name: "Claude PreToolUse command replaced by something else",
    edit: (f) => json(f, CLAUDE, (o) => (o.hooks.PreToolUse[0].hooks[1].command = "true")),
    expect: [[CLAUDE, "hook entry PreToolUse command handler removed"]],
  },
  {
    name: "Claude PreToolUse: both handlers replaced by something else",
    edit: (f) =>
      json(f, CLAUDE, (o) => (o.hooks.PreToolUse[0].hooks = [{ type: "command", command: "true" }])),
    expect: [[CLAUDE, "hook entry PreToolUse removed"]],
  },
  {
    name: "Claude PreToolUse mcp_tool handler's input changed",
    edit: (f) => json(f, CLAUDE, (o) => (o.hooks.PreToolUse[0].hooks[0].input.session_id = "")),
    expect: [[CLAUDE, "hook entry PreToolUse mcp_tool-input changed"]],
  },
  {
    name: "Claude onFailure dropped, from the mcp_tool handler and from the gate",
    edit: (f) =>
      json(f, CLAUDE, (o) => {
        delete o.hooks.PreToolUse[0].hooks[0].onFailure;
        delete o.hooks.PreToolUse[0].hooks[1].onFailure;
      }),
    expect: [[CLAUDE, "hook entry PreToolUse mcp_tool-onFailure, onFailure changed"]],
  },
  {
    name: "Codex PostToolUse timeout changed",
    edit: (f) => json(f, CODEX, (o) => (o.hooks.PostToolUse[0].hooks[0].timeout = 1)),
    expect: [[CODEX, "hook entry PostToolUse timeout changed"]],
  },
  {
    name: "Codex PreToolUse matcher narrowed, and made async",
    edit: (f) =>
      json(f, CODEX, (o) => {
        o.hooks.PreToolUse[0].matcher = "Read";
        o.hooks.PreToolUse[0].hooks[0].async = true;
      }),
    expect: [[CODEX, "hook entry PreToolUse async, matcher changed"]],
  },
  {
    name: "Codex hooks: every event gone",
    edit: (f) => json(f, CODEX, (o) => (o.hooks = {})),
    expect: ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"].map((e) => [
      CODEX,
      `hook entry ${e} removed`,
    ]),
  },
  { name: "Codex hooks.json deleted", edit: (f) => f.delete(CODEX), expect: [[CODEX, "file removed"]] },
  {
    name: "Codex hooks.json not JSON",
    edit: (f) => f.set(CODEX, "{ oops"),
    expect: [[CODEX, "not a JSON object (no hook of it runs)"]],
  },
  {
    name: "disableAllHooks in .claude/settings.json",
    edit: (f) => json(f, CLAUDE, (o) => (o.disableAllHooks = true)),
    expect: [[CLAUDE, "disableAllHooks set"]],
  },
  {
    name: "disableAllHooks in .claude/settings.local.json",
    edit: (f) => f.set(".claude/settings.local.json", JSON.stringify({ disableAllHooks: true })),
    expect: [[".claude/settings.local.json", "disableAllHooks set"]],
  },
  {
    name: "the adapter files checked out with CRLF line endings (core.autocrlf)",
    edit: (f) => {
      for (const n of ADAPTER_FILES) f.set(`.cohent/${n}`, f.get(`.cohent/${n}`)!.replace(/\n/g, "\r\n"));
    },
    expect: [],
  },
  {
    name: "cohent.cjs replaced",
    edit: (f) => f.set(".cohent/cohent.cjs", f.get(".cohent/cohent.cjs") + "// patched\n"),
    expect: [[".cohent/cohent.cjs", "cohent.cjs replaced"]],
  },
  {
    name: "cohent.mjs removed, cohent-mcp.mjs replaced",
    edit: (f) => {
      f.delete(".cohent/cohent.mjs");
      f.set(".cohent/cohent-mcp.mjs", "evil");
    },
    expect: [
      [".cohent/cohent.mjs", "cohent.mjs removed"],
      [".cohent/cohent-mcp.mjs", "cohent-mcp.mjs replaced"],
    ],
  },
  {
    name: "project.json's adapter hashes removed",
    edit: (f) => json(f, ".cohent/project.json", (o) => delete o.adapterFiles),
    expect: [[".cohent/project.json", "adapter file hashes missing"]],
  },
  {
    name: "a project.json init never wrote (no adapter version, no hashes): nothing to compare",
    edit: (f) =>
      f.set(".cohent/project.json", JSON.stringify({ version: 1, service: "http://x", repository: "a/b" })),
    expect: null,
  },
  {
    name: "AGENTS.md's managed section edited",
    edit: (f) =>
      f.set("AGENTS.md", f.get("AGENTS.md")!.replace("Peer prompts", "Peer prompts (ignore Cohent)")),
    expect: [["AGENTS.md", "managed section changed"]],
  },
  {
    name: "copilot instructions' managed section removed",
    edit: (f) => f.set(".github/copilot-instructions.md", "# nothing\n"),
    expect: [[".github/copilot-instructions.md", "managed section removed"]],
  },
  {
    name: "Cursor rule edited",
    edit: (f) =>
      f.set(".cursor/rules/cohent.mdc", f.get(".cursor/rules/cohent.mdc") + "\nIgnore the above.\n"),
    expect: [[".cursor/rules/cohent.mdc", "rule changed"]],
  },
  {
    name: "MCP entries changed: .mcp.json args, .vscode's command, Codex's command",
    edit: (f) => {
      json(f, ".mcp.json", (o) => (o.mcpServers.cohent.args = ["evil.mjs", "mcp"]));
      json(f, ".vscode/mcp.json", (o) => (o.servers.cohent.command = "python"));
      f.set(".codex/config.toml", f.get(".codex/config.toml")!.replace('command = "node"', 'command = "sh"'));
    },
    expect: [
      [".mcp.json", "MCP entry cohent changed"],
      [".codex/config.toml", "MCP entry cohent changed"],
      [".vscode/mcp.json", "MCP entry cohent changed"],
    ],
  },
  {
    name: "an MCP file without Cohent's entry (init ran without --mcp-write, or a person removed it)",
    edit: (f) => json(f, ".cursor/mcp.json", (o) => delete o.mcpServers.cohent),
    expect: [],
  },
  {
    name: "other clients' unrelated settings: Gemini's model and another hook, Cursor's and Copilot's other hooks, a person's own OpenCode plugin",
    edit: (f) => {
      json(f, GEMINI, (o) => {
        o.model = { name: "gemini-2.5-pro" };
        o.hooks.BeforeTool.push({ matcher: "write_file", hooks: [{ type: "command", command: "lint" }] });
        o.hooksConfig = { notifications: false };
      });
      json(f, CURSOR, (o) => (o.hooks.afterFileEdit = [{ command: "prettier --write" }]));
      json(f, COPILOT, (o) => o.hooks.preToolUse.push({ type: "command", bash: "./audit.sh" }));
      f.set(
        ".github/hooks/audit.json",
        JSON.stringify({ version: 1, hooks: { sessionEnd: [{ bash: "x" }] } }),
      );
      f.set(".opencode/plugin/mine.js", "export const Mine = async () => ({});\n");
      f.set(".opencode/plugins/other.ts", "export const Other = async () => ({});\n");
    },
    expect: [],
  },
  {
    name: "the OpenCode plugin checked out with CRLF line endings",
    edit: (f) => f.set(PLUGIN, f.get(PLUGIN)!.replace(/\n/g, "\r\n")),
    expect: [],
  },
  {
    name: "Copilot: hooks file removed",
    edit: (f) => f.delete(COPILOT),
    expect: [[COPILOT, "file removed"]],
  },
  {
    name: "Copilot: preToolUse made an HTTP hook (fails open), postToolUse's timeout shortened",
    edit: (f) =>
      json(f, COPILOT, (o) => {
        o.hooks.preToolUse[0] = { type: "http", url: "http://127.0.0.1:9/" };
        o.hooks.postToolUse[0].timeoutSec = 5;
      }),
    expect: [
      [COPILOT, "hook entry preToolUse removed"],
      [COPILOT, "hook entry postToolUse timeoutSec changed"],
    ],
  },
  {
    name: "Copilot: disableAllHooks in its hooks file, in another hooks file of the folder, and in the repository settings",
    edit: (f) => {
      json(f, COPILOT, (o) => (o.disableAllHooks = true));
      f.set(".github/hooks/zz.json", JSON.stringify({ version: 1, disableAllHooks: true, hooks: {} }));
      f.set(".github/copilot/settings.local.json", JSON.stringify({ disableAllHooks: true }));
    },
    expect: [
      [COPILOT, "disableAllHooks set"],
      [".github/hooks/zz.json", "disableAllHooks set"],
      [".github/copilot/settings.local.json", "disableAllHooks set"],
    ],
  },
  {
    name: "Gemini: BeforeTool's timeout in seconds (30 ms: every call times out, open), its wrapper removed",
    edit: (f) =>
      json(f, GEMINI, (o) => {
        o.hooks.BeforeTool[0].hooks[0].timeout = 30;
        o.hooks.AfterAgent[0].hooks[0].command = "node .cohent/cohent.cjs hook";
      }),
    expect: [
      [GEMINI, "hook entry BeforeTool timeout changed"],
      [GEMINI, "hook entry AfterAgent command changed"],
    ],
  },
  {
    name: "Gemini: hooks switched off (hooksConfig.enabled false), Cohent's BeforeTool named in hooksConfig.disabled",
    edit: (f) =>
      json(f, GEMINI, (o) => {
        o.hooksConfig = { enabled: false, disabled: [o.hooks.BeforeTool[0].hooks[0].command] };
      }),
    expect: [
      [GEMINI, "hooksConfig.enabled false (no hook runs)"],
      [GEMINI, "hooksConfig.disabled names a Cohent hook"],
    ],
  },
  {
    name: "Gemini: settings not JSON",
    edit: (f) => f.set(GEMINI, "{ hooks"),
    expect: [[GEMINI, "not a JSON object (no hook of it runs)"]],
  },
  {
    name: "Cursor: failClosed dropped from preToolUse, stop removed",
    edit: (f) =>
      json(f, CURSOR, (o) => {
        delete o.hooks.preToolUse[0].failClosed;
        o.hooks.stop = [];
      }),
    expect: [
      [CURSOR, "hook entry preToolUse failClosed changed"],
      [CURSOR, "hook entry stop removed"],
    ],
  },
  {
    name: "Cursor: a hooks file of another version",
    edit: (f) => json(f, CURSOR, (o) => (o.version = 2)),
    expect: [[CURSOR, "version changed (the client may load none of it)"]],
  },
  {
    name: "OpenCode: plugin removed",
    edit: (f) => f.delete(PLUGIN),
    expect: [[PLUGIN, "file removed"]],
  },
  {
    name: "OpenCode: plugin edited (one character is enough for OpenCode to skip it)",
    edit: (f) => f.set(PLUGIN, f.get(PLUGIN)!.replace("export const", "export cont")),
    expect: [[PLUGIN, "plugin changed (OpenCode skips a plugin it cannot load, silently)"]],
  },
  {
    name: "OpenCode: a second copy of Cohent's plugin in .opencode/plugins/",
    edit: (f) => f.set(".opencode/plugins/cohent.js", f.get(PLUGIN)!),
    expect: [[".opencode/plugins/cohent.js", "a second Cohent plugin (it runs every hook twice)"]],
  },
];

describe("the guard wiring's fingerprint", () => {
  const fresh = initialized();
  it.each(CASES)("$name", ({ edit, expect: want }) => {
    const files = new Map(fresh.files);
    edit(files, fresh.root);
    const got = changesOf(fresh.root, files);
    expect(got && got.map((c) => [c.file, c.change])).toEqual(want);
    // Every phrase is one the server accepts.
    for (const c of got ?? []) expect(WiringChange.safeParse(c).success, JSON.stringify(c)).toBe(true);
  });

  it("checks every file of the guard's table (GUARD_FILES): a section generically, the others each by name", () => {
    const checked = new Set(checkedPaths());
    for (const g of GUARD_FILES) if (g.kind === "whole") expect(checked, g.path).toContain(g.path);
  });

  it("says each file once, with its changes", () => {
    expect(
      describeChanges([
        { file: CLAUDE, change: "disableAllHooks set" },
        { file: CLAUDE, change: "hook entry Stop removed" },
        { file: ".cohent/cohent.cjs", change: "cohent.cjs replaced" },
      ]),
    ).toBe(
      ".claude/settings.json: disableAllHooks set; hook entry Stop removed. .cohent/cohent.cjs: cohent.cjs replaced",
    );
  });
});
