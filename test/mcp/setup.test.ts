import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mergeTomlTable } from "../../adapter/src/installer/mcp-setup.js";
import { gitArgv, isSafeRevision } from "../../client/src/git/git.js";
import { git, makeRepo, runAdapter } from "./helpers.js";

describe("cohent init: MCP entries", () => {
  it("prints every client's entry, and with --mcp-write merges them into the files, idempotently", async () => {
    const repo = await makeRepo(null);
    git(repo.root, "remote", "add", "origin", "git@github.com:acme/shop.git");
    mkdirSync(path.join(repo.root, ".cursor"), { recursive: true });
    writeFileSync(
      path.join(repo.root, ".cursor/mcp.json"),
      JSON.stringify({ mcpServers: { other: { command: "other" } } }),
    );
    mkdirSync(path.join(repo.root, ".codex"), { recursive: true });
    writeFileSync(
      path.join(repo.root, ".codex/config.toml"),
      'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n',
    );

    const printed = await runAdapter(repo, ["init", "--server", "http://127.0.0.1:1"]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("claude mcp add --scope project cohent -- node .cohent/cohent.mjs mcp");
    expect(printed.stdout).toContain("[mcp_servers.cohent]");
    // Claude Code's entry is always written: its guard runs in the server (claude-wiring.ts); the others only on request.
    expect(
      JSON.parse(readFileSync(path.join(repo.root, ".mcp.json"), "utf8")).mcpServers.cohent,
    ).toBeTruthy();
    expect(existsSync(path.join(repo.root, ".vscode/mcp.json"))).toBe(false);
    expect(existsSync(path.join(repo.root, ".cohent/cohent-mcp.mjs"))).toBe(true);

    const written = await runAdapter(repo, [
      "init",
      "--server",
      "http://127.0.0.1:1",
      "--mcp-write",
      "--json",
    ]);
    expect(written.code).toBe(0);
    const env = JSON.parse(written.stdout);
    const statuses = Object.fromEntries(env.data.files.map((f: any) => [f.path, f.status]));
    expect(statuses).toMatchObject({
      ".mcp.json": "unchanged",
      ".codex/config.toml": "updated",
      ".cursor/mcp.json": "updated",
      ".vscode/mcp.json": "created",
    });
    expect(JSON.parse(readFileSync(path.join(repo.root, ".mcp.json"), "utf8"))).toEqual({
      mcpServers: { cohent: { command: "node", args: [".cohent/cohent.mjs", "mcp"] } },
    });
    const cursor = JSON.parse(readFileSync(path.join(repo.root, ".cursor/mcp.json"), "utf8"));
    expect(Object.keys(cursor.mcpServers)).toEqual(["other", "cohent"]);
    expect(
      JSON.parse(readFileSync(path.join(repo.root, ".vscode/mcp.json"), "utf8")).servers.cohent,
    ).toMatchObject({ type: "stdio", command: "node" });
    const toml = readFileSync(path.join(repo.root, ".codex/config.toml"), "utf8");
    expect(toml).toContain('model = "gpt-5"');
    expect(toml).toContain("[mcp_servers.other]");
    expect(toml).toContain(
      `[mcp_servers.cohent]\ncommand = "node"\nargs = [${JSON.stringify(path.join(repo.root, ".cohent/cohent.mjs"))}, "mcp"]`,
    );

    const again = await runAdapter(repo, ["init", "--server", "http://127.0.0.1:1", "--mcp-write", "--json"]);
    expect(JSON.parse(again.stdout).data.files.every((f: any) => f.status === "unchanged")).toBe(true);
  });

  it("replaces our TOML table in place and keeps the tables after it", () => {
    const before = '[mcp_servers.cohent]\ncommand = "old"\n\n[mcp_servers.x]\ncommand = "x"\n';
    const after = mergeTomlTable(before, "[mcp_servers.cohent]", 'command = "node"');
    expect(after).toBe('[mcp_servers.cohent]\ncommand = "node"\n\n[mcp_servers.x]\ncommand = "x"\n');
    expect(mergeTomlTable(after, "[mcp_servers.cohent]", 'command = "node"')).toBe(after);
  });
});

describe("git, run safely", () => {
  it("every git command disables fsmonitor, and revisions that could be options are refused", () => {
    expect(gitArgv(["rev-parse", "HEAD"]).slice(0, 2)).toEqual(["-c", "core.fsmonitor=false"]);
    for (const bad of ["-x", "--output=/tmp/x", "a b", "a\0b", "a\nb", "", "x".repeat(300)])
      expect(isSafeRevision(bad)).toBe(false);
    for (const good of ["HEAD", "origin/main", "v1.2.0", "HEAD~2", "abc123^{commit}"])
      expect(isSafeRevision(good)).toBe(true);
  });

  it("a staged checkpoint never runs the repository's fsmonitor hook nor takes index.lock", async () => {
    const repo = await makeRepo("http://127.0.0.1:1");
    const marker = path.join(repo.home, "fsmonitor-ran");
    const hookScript = path.join(repo.home, "fsmonitor.sh");
    writeFileSync(hookScript, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    git(repo.root, "config", "core.fsmonitor", hookScript);
    writeFileSync(path.join(repo.root, "a.txt"), "a\n");
    git(repo.root, "add", "a.txt");
    // The control: plain git in this repository does run the hook.
    git(repo.root, "status", "--porcelain");
    expect(existsSync(marker)).toBe(true);
    (await import("node:fs")).rmSync(marker);

    const { stagedPaths } = await import("../../client/src/git/git.js");
    expect(await stagedPaths(repo.root)).toEqual(["a.txt"]);
    const { topLevel } = await import("../../client/src/git/git.js");
    expect(topLevel(path.join(repo.root, ".cohent"))).toBe(repo.root);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("the hook path stays lean", () => {
  it("cohent.mjs carries neither the MCP SDK nor zod; the second file does", async () => {
    const { builtAdapter } = await import("../adapter/helpers.js");
    const { MCP_FILE } = await import("../../adapter/build.mjs");
    const bundle = await builtAdapter();
    const hookFile = readFileSync(bundle, "utf8");
    const mcpFile = readFileSync(path.join(path.dirname(bundle), MCP_FILE), "utf8");
    for (const marker of ["notifications/roots/list_changed", "jsonrpc", "toJSONSchema"]) {
      expect(hookFile).not.toContain(marker);
      expect(mcpFile).toContain(marker);
    }
  });

  it("the second file carries Cohent's schemas generated at build time, not zod's JSON Schema generator", async () => {
    const { builtAdapter } = await import("../adapter/helpers.js");
    const { MCP_FILE, trimMcp } = await import("../../adapter/build.mjs");
    const mcpFile = readFileSync(path.join(path.dirname(await builtAdapter()), MCP_FILE), "utf8");
    // The generator writes these; the precomputed schemas in the file are compressed.
    expect(mcpFile).not.toContain("json-schema.org");
    expect(mcpFile).not.toContain("draft-2020-12");
    // zod trimmed the same way still builds schemas, validates and reads their bounds; only generating throws.
    const { build } = await import("esbuild");
    const r = await build({
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      logLevel: "silent",
      plugins: [trimMcp],
      stdin: {
        resolveDir: path.join(import.meta.dirname, "..", "..", "mcp-server", "src"),
        contents: `import { z } from "zod";
          const s = z.string().min(2).max(5), n = z.number().int().max(3);
          const attempt = (f) => { try { f(); return "generated"; } catch (e) { return e.message; } };
          export default {
            parsed: [s.safeParse("abc").success, s.safeParse("a").success, n.safeParse(4).success],
            bounds: [s.minLength, s.maxLength, n.maxValue, n.isInt],
            standard: typeof s["~standard"].validate,
            generate: [
              () => z.toJSONSchema(s),
              () => s.toJSONSchema(),
              () => s["~standard"].jsonSchema.input({ target: "draft-07" }),
              () => new z.core.JSONSchemaGenerator(),
            ].map(attempt),
          };`,
      },
    });
    const trimmed = (await import(`data:text/javascript,${encodeURIComponent(r.outputFiles[0]!.text)}`))
      .default;
    expect(trimmed).toEqual({
      parsed: [true, false, false],
      bounds: [2, 5, 3, true],
      standard: "function",
      generate: Array(4).fill("zod's JSON Schema generator is not bundled in Cohent's MCP file."),
    });
  });
});
