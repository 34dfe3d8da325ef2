import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { signedInAdmin } from "../console/helpers.js";
import {
  canonicalJson,
  declaredHooks,
  parseCodexTrust,
  trustHash,
  trustPreimage,
} from "../../adapter/src/installer/trust.js";
import { CODEX_GUARD_COMMAND, init } from "../../adapter/src/installer/init.js";
import { pluginLoads } from "../../adapter/src/installer/doctor-hosts.js";
import { builtAdapter, claude, hook, makeCheckout, run } from "./helpers.js";

/**
 * Trust vectors. The pre-images follow docs/clients.md's recipe (Codex's hook trust) literally; the
 * digests were computed independently with `printf '%s' PREIMAGE | sha256sum`.
 */
const VECTORS: { label: string; matcher?: string; handler: object; preimage: string; hash: string }[] = [
  {
    label: "pre_tool_use",
    matcher: "*",
    handler: { type: "command", command: "node .cohent/cohent.mjs hook", timeout: 30 },
    preimage:
      '{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"node .cohent/cohent.mjs hook","timeout":30,"type":"command"}],"matcher":"*"}',
    hash: "sha256:898a9bd4a46fc023ada338ebf7af8bdb45d39e9438afd82409a9aa71fa163bb1",
  },
  {
    // The fail-closed PreToolUse entry that init writes (init.ts CODEX_GUARD_COMMAND), byte for byte.
    label: "pre_tool_use",
    matcher: "*",
    handler: {
      type: "command",
      command: `sh -c 'node .cohent/cohent.cjs hook --host codex 2>/dev/null || { echo "Cohent: the guard hook failed (adapter missing, crashed or no node on PATH), so this tool call is refused. Repair: npx cohent init, then node .cohent/cohent.mjs doctor" >&2; exit 2; }'`,
      timeout: 30,
    },
    preimage: `{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"sh -c 'node .cohent/cohent.cjs hook --host codex 2>/dev/null || { echo \\"Cohent: the guard hook failed (adapter missing, crashed or no node on PATH), so this tool call is refused. Repair: npx cohent init, then node .cohent/cohent.mjs doctor\\" >&2; exit 2; }'","timeout":30,"type":"command"}],"matcher":"*"}`,
    hash: "sha256:46bf2eb376e36b704cf331e075ec084df66e6f53b91e10d057f3d4db8aaffdb1",
  },
  {
    // The same entry as the release before `--host` wrote it.
    label: "pre_tool_use",
    matcher: "*",
    handler: {
      type: "command",
      command: `sh -c 'node .cohent/cohent.cjs hook 2>/dev/null || { echo "Cohent: the guard hook failed (adapter missing, crashed or no node on PATH), so this tool call is refused. Repair: npx cohent init, then node .cohent/cohent.mjs doctor" >&2; exit 2; }'`,
      timeout: 30,
    },
    preimage: `{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"sh -c 'node .cohent/cohent.cjs hook 2>/dev/null || { echo \\"Cohent: the guard hook failed (adapter missing, crashed or no node on PATH), so this tool call is refused. Repair: npx cohent init, then node .cohent/cohent.mjs doctor\\" >&2; exit 2; }'","timeout":30,"type":"command"}],"matcher":"*"}`,
    hash: "sha256:567d9769c809f3a1428388725bd39530f4e835abf7c1c84cb9bd608f2403ebd4",
  },
  {
    // stop takes no matcher: a matcher present in the file is left out of the hash.
    label: "stop",
    matcher: "*",
    handler: { type: "command", command: "node .cohent/cohent.mjs hook", timeout: 30 },
    preimage:
      '{"event_name":"stop","hooks":[{"async":false,"command":"node .cohent/cohent.mjs hook","timeout":30,"type":"command"}]}',
    hash: "sha256:6953d61f5fd96f0b6dd9ed4f2cd51006b4cb90efaabfefd05f49029abf953c8c",
  },
  {
    // timeout defaults to 600.
    label: "user_prompt_submit",
    handler: { type: "command", command: "node a.js" },
    preimage:
      '{"event_name":"user_prompt_submit","hooks":[{"async":false,"command":"node a.js","timeout":600,"type":"command"}]}',
    hash: "sha256:adbbbc4a6c53d171c5fe4d632119683991b588cbd1e4b30f128892fa09e7cb26",
  },
  {
    // statusMessage only when set; keys sorted.
    label: "session_start",
    matcher: "startup",
    handler: { command: "x", type: "command", timeout: 10, statusMessage: "checking" },
    preimage:
      '{"event_name":"session_start","hooks":[{"async":false,"command":"x","statusMessage":"checking","timeout":10,"type":"command"}],"matcher":"startup"}',
    hash: "sha256:8df06395bbfe5a47e3ef9f5a67f49b5dd88edc64920205ec4743a99a59cc6fee",
  },
];

describe("Codex trust hashes", () => {
  it.each(VECTORS)("$label / $matcher", (v) => {
    expect(trustPreimage(v.label, v.matcher, v.handler)).toBe(v.preimage);
    expect(trustHash(v.label, v.matcher, v.handler)).toBe(v.hash);
  });
  it("canonical JSON sorts keys at every level", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[{"y":2,"z":1}]},"b":1}',
    );
  });
  it("keys each handler by file, label, group index and handler index", () => {
    const hooks = declaredHooks("/r/.codex/hooks.json", {
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [{ type: "command", command: "a" }] },
          {
            matcher: "*",
            hooks: [
              { type: "command", command: "b" },
              { type: "command", command: "c" },
            ],
          },
        ],
        Unknown: [],
      },
    });
    expect(hooks.map((h) => h.key)).toEqual([
      "/r/.codex/hooks.json:pre_tool_use:0:0",
      "/r/.codex/hooks.json:pre_tool_use:1:0",
      "/r/.codex/hooks.json:pre_tool_use:1:1",
    ]);
  });
  it("reads trust out of config.toml", () => {
    const store = parseCodexTrust(
      [
        'model = "gpt-5.5"',
        '[projects."/abs/repo"]',
        'trust_level = "trusted"',
        "[hooks.state]",
        '[hooks.state."/abs/repo/.codex/hooks.json:pre_tool_use:0:0"]',
        'trusted_hash = "sha256:abc" # comment',
        "[hooks.state.'/abs/repo/.codex/hooks.json:stop:0:0']",
        "enabled = false",
        "[other]",
        'trusted_hash = "sha256:not-this"',
      ].join("\n"),
    );
    expect(store.projects).toEqual({ "/abs/repo": { trust_level: "trusted" } });
    expect(store.hookState).toEqual({
      "/abs/repo/.codex/hooks.json:pre_tool_use:0:0": { trusted_hash: "sha256:abc" },
      "/abs/repo/.codex/hooks.json:stop:0:0": { enabled: false },
    });
    // Forms a line reader missed: an inline table, a multi-line array before the tables.
    const inline = parseCodexTrust(
      [
        "notify = [",
        '  "a",',
        "]",
        'hooks.state."/r/.codex/hooks.json:stop:0:0" = { trusted_hash = "sha256:x", enabled = true }',
      ].join("\n"),
    );
    expect(inline.hookState).toEqual({
      "/r/.codex/hooks.json:stop:0:0": { trusted_hash: "sha256:x", enabled: true },
    });
    // Not TOML: Codex cannot read it either, so nothing is trusted.
    expect(parseCodexTrust('[hooks.state."x"]\ntrusted_hash = "unclosed')).toEqual({
      projects: {},
      hookState: {},
    });
  });
});

const fx = backendForFile("acme/shop", "");

describe("doctor", () => {
  it("reports each Codex hook as trusted, modified or untrusted, the project trust, and the stale-store warning", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const codexHome = path.join(co.home, "codex");
    mkdirSync(codexHome);
    const hooksFile = path.join(co.root, ".codex", "hooks.json");
    const ours = { type: "command", command: "node .cohent/cohent.cjs hook --host codex", timeout: 30 };
    const toml = [
      `[projects.${JSON.stringify(co.root)}]`,
      'trust_level = "trusted"',
      `[hooks.state.${JSON.stringify(`${hooksFile}:session_start:0:0`)}]`,
      `trusted_hash = "${trustHash("session_start", undefined, ours)}"`,
      `[hooks.state.${JSON.stringify(`${hooksFile}:user_prompt_submit:0:0`)}]`,
      `trusted_hash = "${trustHash("user_prompt_submit", undefined, ours)}"`,
      `[hooks.state.${JSON.stringify(`${hooksFile}:pre_tool_use:0:0`)}]`,
      `trusted_hash = "${VECTORS[1]!.hash}"`,
      `[hooks.state.${JSON.stringify(`${hooksFile}:post_tool_use:0:0`)}]`,
      `trusted_hash = "${trustHash("post_tool_use", "*", { ...ours, timeout: 10 })}"`,
    ].join("\n");
    writeFileSync(path.join(codexHome, "config.toml"), toml);
    const old = new Date(Date.now() - 60_000);
    utimesSync(hooksFile, old, old);

    const token = await fx.backend.issueToken("acme/shop", "dora");
    const r = await run(co, ["doctor", "--json"], {
      env: { CODEX_HOME: codexHome, COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" },
    });
    expect(r.code).toBe(1);
    const env = JSON.parse(r.stdout);
    expect(env).toMatchObject({ version: 1, ok: true, operation: "doctor" });
    const trust = Object.fromEntries(
      env.data.codex.hooks.map((h: { event: string; trust: string }) => [h.event, h.trust]),
    );
    expect(trust).toEqual({
      SessionStart: "trusted",
      UserPromptSubmit: "trusted",
      PreToolUse: "trusted",
      PostToolUse: "modified",
      Stop: "untrusted",
    });
    expect(env.data.codex.projectTrust).toBe("trusted");
    expect(env.data.codex.hooksNewerThanTrust).toBe(false);
    expect(env.data.guarded).toMatchObject({ codex: false, claude: true });
    const byName = Object.fromEntries(
      env.data.checks.map((c: { name: string; status: string }) => [c.name, c.status]),
    );
    expect(byName).toMatchObject({
      project: "ok",
      endpoint: "ok",
      pairing: "ok",
      credential: "ok",
      "codex project trust": "ok",
      "claude hooks": "ok",
      "hook entry": "ok",
      "node in a login shell": "ok",
      "shell writes": "ok",
    });
    // The shell guard's line names what no hook can see.
    const shell = env.data.checks.find((c: { name: string }) => c.name === "shell writes");
    expect(shell.detail).toContain("is caught at the next tool call of any session");

    // Trust the last two; then edit the hooks file after trusting: the warning appears.
    writeFileSync(
      path.join(codexHome, "config.toml"),
      toml.replace(
        trustHash("post_tool_use", "*", { ...ours, timeout: 10 }),
        trustHash("post_tool_use", "*", ours),
      ) +
        `\n[hooks.state.${JSON.stringify(`${hooksFile}:stop:0:0`)}]\ntrusted_hash = "${trustHash("stop", undefined, ours)}"\n`,
    );
    utimesSync(path.join(codexHome, "config.toml"), old, old);
    utimesSync(hooksFile, new Date(), new Date());
    const fixed = await run(co, ["doctor"], {
      env: { CODEX_HOME: codexHome, COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" },
    });
    expect(fixed.stdout).toContain("Codex will run the hooks here: yes.");
    expect(fixed.stdout).toMatch(/warn {2}codex trust freshness: \.codex\/hooks\.json is newer than/);
    expect(fixed.stdout).toContain(
      "Fails closed when the adapter itself fails: Codex yes, Claude Code yes, Copilot CLI yes, Gemini CLI yes, Cursor yes, OpenCode yes.",
    );
    expect(fixed.code).toBe(0);
  });

  it("says per client whether the PreToolUse wiring fails closed, and the new entry's trust hash is what init wrote", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const hooksFile = path.join(co.root, ".codex", "hooks.json");
    const pre = declaredHooks(hooksFile, JSON.parse(readFileSync(hooksFile, "utf8"))).find(
      (h) => h.event === "PreToolUse",
    )!;
    expect(pre.command).toBe(CODEX_GUARD_COMMAND);
    expect(pre.hash).toBe(VECTORS[1]!.hash);
    const closed = JSON.parse(
      (await run(co, ["doctor", "--json"], { env: { SHELL: "/bin/sh" } })).stdout,
    ).data;
    expect(closed.failsClosed).toEqual({
      codex: true,
      claude: true,
      copilot: true,
      gemini: true,
      cursor: true,
      opencode: true,
    });
    expect(closed.checks.some((c: { name: string }) => c.name === "codex mcp")).toBe(false);
    init({
      cwd: co.root,
      server: fx.backend.url,
      repo: "acme/shop",
      bundle: await builtAdapter(),
      mcpWrite: true,
    });
    const withMcp = JSON.parse(
      (await run(co, ["doctor", "--json"], { env: { SHELL: "/bin/sh" } })).stdout,
    ).data;
    expect(withMcp.checks).toContainEqual(
      expect.objectContaining({
        name: "codex mcp",
        status: "ok",
        detail: expect.stringContaining("outside its workspace-write sandbox"),
      }),
    );
    // The wiring of older releases: a plain command, no wrapper, no onFailure.
    const settings = path.join(co.root, ".claude", "settings.json");
    const c = JSON.parse(readFileSync(settings, "utf8"));
    c.hooks.PreToolUse[0].hooks[0] = {
      type: "command",
      command: 'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.mjs" hook',
    };
    writeFileSync(settings, JSON.stringify(c));
    const x = JSON.parse(readFileSync(hooksFile, "utf8"));
    x.hooks.PreToolUse[0].hooks[0].command = "node .cohent/cohent.mjs hook";
    writeFileSync(hooksFile, JSON.stringify(x));
    const r = await run(co, ["doctor", "--json"], { env: { SHELL: "/bin/sh" } });
    const open = JSON.parse(r.stdout).data;
    expect(open.failsClosed).toMatchObject({ codex: false, claude: false });
    expect(open.checks).toContainEqual(
      expect.objectContaining({
        name: "codex fails closed",
        status: "fail",
        detail: expect.stringContaining("fails OPEN"),
      }),
    );
    expect(open.checks).toContainEqual(
      expect.objectContaining({ name: "claude fails closed", status: "fail" }),
    );
    expect(open.checks).toContainEqual(
      expect.objectContaining({
        name: "hook entry",
        status: "warn",
        detail: expect.stringContaining(".codex/hooks.json and .claude/settings.json run .cohent/cohent.mjs"),
      }),
    );
    expect(r.code).toBe(1);
  });

  it("reads the guard status of each of my work intents from the service, and refuses a bad credential", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    const token = await fx.backend.issueToken("acme/shop", "gus", "Claude Code");
    const env = { ...claude.env, COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" };
    await hook(co, claude.prompt("gus-1", co.root, "Work that doctor should see"), env);
    await run(co, ["intent", JSON.stringify({ objective: "Doctor sees me", outputs: ["seen"] })], {
      env: { ...env, COHENT_SESSION: "gus-1" },
    });
    const r = await run(co, ["doctor", "--json"], { env });
    const data = JSON.parse(r.stdout).data;
    expect(data.work.person).toBe("gus");
    expect(data.work.intents).toEqual([
      expect.objectContaining({
        sessionKey: "gus-1",
        guard: "calling-in",
        action: "proceed",
        objective: "Doctor sees me",
      }),
    ]);
    fx.backend.advance(3 * 60_000);
    const later = await run(co, ["doctor"], { env });
    expect(later.stdout).toMatch(/wki_\w+ {2}silent {2}proceed {2}Claude Code {2}session gus-1/);

    const bad = await run(co, ["doctor", "--json"], {
      env: { ...env, COHENT_AGENT_TOKEN: "coh_revoked-or-made-up" },
    });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).data.checks).toContainEqual(
      expect.objectContaining({ name: "credential", status: "fail" }),
    );
  });

  it("says plainly when Codex will not run the hooks and nothing is paired", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    const r = await run(co, ["doctor"], {
      env: { CODEX_HOME: path.join(co.home, "none"), SHELL: "/bin/sh" },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL  pairing: not paired on this machine");
    expect(r.stdout).toContain("FAIL  codex hooks: .codex/hooks.json is missing");
    expect(r.stdout).toContain("Codex will run the hooks here: NO.");
  });

  it("names each modified file of the guard wiring and the repair, tells the service, and clears it once repaired", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const token = await fx.backend.issueToken("acme/shop", "fay");
    const env = { COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" };
    const hooksFile = path.join(co.root, ".codex", "hooks.json");
    const x = JSON.parse(readFileSync(hooksFile, "utf8"));
    x.hooks.PreToolUse[0].hooks[0].command = "node .cohent/cohent.cjs hook || true";
    x.hooks.PreToolUse[0].hooks[0].timeout = 5;
    writeFileSync(hooksFile, JSON.stringify(x));
    writeFileSync(path.join(co.root, ".cohent", "cohent-mcp.mjs"), "// not the MCP server\n");
    const r = await run(co, ["doctor"], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "FAIL  guard wiring: MODIFIED since cohent init wrote it: .cohent/cohent-mcp.mjs: cohent-mcp.mjs replaced. .codex/hooks.json: hook entry PreToolUse command, timeout changed.",
    );
    expect(r.stdout).toContain(
      "A person restores them: node .cohent/cohent.mjs init --upgrade (or npx cohent init --upgrade), reviews git diff, and commits.",
    );
    const admin = await signedInAdmin(fx.backend);
    const shown = async () =>
      (
        (await admin.get("/api/console/repos/acme/shop")).body.data.wiring as {
          person: string;
          changes: unknown[];
        }[]
      ).filter((w) => w.person === "fay");
    expect((await shown())[0]?.changes).toEqual([
      { file: ".cohent/cohent-mcp.mjs", change: "cohent-mcp.mjs replaced" },
      { file: ".codex/hooks.json", change: "hook entry PreToolUse command, timeout changed" },
    ]);

    expect((await run(co, ["init", "--upgrade"], { env })).code).toBe(0);
    const fixed = JSON.parse((await run(co, ["doctor", "--json"], { env })).stdout).data;
    expect(fixed.checks).toContainEqual(expect.objectContaining({ name: "guard wiring", status: "ok" }));
    expect(fixed.wiring).toEqual({ changes: [], reported: true });
    expect(await shown()).toEqual([]);

    // A checkout init did not write (no recorded adapter): doctor says the check cannot work there.
    const bare = await makeCheckout(fx.backend.url, "acme/shop");
    const warn = JSON.parse((await run(bare, ["doctor", "--json"], { env })).stdout).data;
    expect(warn.checks).toContainEqual(
      expect.objectContaining({
        name: "guard wiring",
        status: "warn",
        detail: expect.stringContaining("Run cohent init --upgrade and commit."),
      }),
    );
  });

  it("fails the login-shell check when node is not on the login PATH", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    const fakeShell = path.join(co.home, "fake-login-shell");
    writeFileSync(fakeShell, "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const r = await run(co, ["doctor", "--json"], { env: { SHELL: fakeShell } });
    const check = JSON.parse(r.stdout).data.checks.find(
      (c: { name: string }) => c.name === "node in a login shell",
    );
    expect(check.status).toBe("fail");
    expect(check.detail).toContain("Codex's shell tool runs a login shell");
  });
});

describe("doctor, the other clients' wiring and trust gates", () => {
  const data = async (co: Awaited<ReturnType<typeof makeCheckout>>, env: Record<string, string> = {}) => {
    const r = await run(co, ["doctor", "--json"], { env: { SHELL: "/bin/sh", ...env } });
    return { ...JSON.parse(r.stdout).data, code: r.code };
  };
  const check = (d: any, name: string) => d.checks.find((c: { name: string }) => c.name === name);
  const client = (d: any, host: string) => d.clients.find((c: { host: string }) => c.host === host);

  it("reports each client's wiring as init wrote it, fail-closed, and Copilot's and Gemini's folder trust from a scratch HOME", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const bare = await data(co);
    expect(bare.clients).toEqual([
      expect.objectContaining({
        host: "copilot",
        wired: true,
        failsClosed: true,
        changes: [],
        hooksRun: false,
      }),
      expect.objectContaining({
        host: "gemini",
        wired: true,
        failsClosed: true,
        changes: [],
        hooksRun: false,
      }),
      expect.objectContaining({
        host: "cursor",
        wired: true,
        failsClosed: true,
        changes: [],
        hooksRun: null,
      }),
      expect.objectContaining({
        host: "opencode",
        wired: true,
        failsClosed: true,
        changes: [],
        hooksRun: true,
      }),
    ]);
    for (const host of ["copilot", "gemini", "cursor", "opencode"]) {
      expect(check(bare, `${host} wiring`)?.status, host).toBe("ok");
      expect(check(bare, `${host} fails closed`)?.status, host).toBe("ok");
    }
    expect(check(bare, "opencode wiring").detail).toContain("it loads and its factory returns the hooks");
    expect(check(bare, "copilot folder trust")).toEqual({
      name: "copilot folder trust",
      status: "warn",
      detail: expect.stringContaining(
        `the folder is NOT trusted in ${path.join(co.home, ".copilot", "config.json")}: Copilot CLI runs no hook of .github/hooks here and says nothing`,
      ),
    });
    const gem = check(bare, "gemini folder trust");
    expect(gem.status).toBe("warn");
    expect(gem.detail).toContain("the folder is NOT trusted (no rule of");
    expect(gem.detail).toContain("exits 55");
    expect(gem.detail).toContain("`gemini --skip-trust` runs the agent with the project's hooks NOT loaded");
    expect(check(bare, "cursor folder trust").detail).toContain("not measured");
    const human = await run(co, ["doctor"], { env: { SHELL: "/bin/sh" } });
    expect(human.stdout).toContain(
      "Hooks run here (trust gates): Copilot CLI NO, Gemini CLI NO, Cursor unknown, OpenCode yes.",
    );
    expect(human.stdout).toContain(
      "Wired as init wrote it: Copilot CLI yes, Gemini CLI yes, Cursor yes, OpenCode yes.",
    );

    // Copilot: a trusted parent folder covers the checkout; `//` comment lines are allowed (measured).
    mkdirSync(path.join(co.home, ".copilot"));
    writeFileSync(
      path.join(co.home, ".copilot", "config.json"),
      `// Copilot's own comment\n${JSON.stringify({ trustedFolders: [path.dirname(co.root) + "/"] })}`,
    );
    // Gemini: a TRUST_FOLDER rule for the checkout.
    mkdirSync(path.join(co.home, ".gemini"));
    const rules = (r: Record<string, string>) =>
      writeFileSync(path.join(co.home, ".gemini", "trustedFolders.json"), JSON.stringify(r));
    rules({ [co.root]: "TRUST_FOLDER" });
    const trusted = await data(co);
    expect(check(trusted, "copilot folder trust").status).toBe("ok");
    expect(check(trusted, "gemini folder trust")).toMatchObject({
      status: "ok",
      detail: expect.stringContaining(`says TRUST_FOLDER for ${co.root}`),
    });
    expect(trusted.guarded).toMatchObject({ copilot: true, gemini: true, cursor: true, opencode: true });

    // Gemini's longest rule wins; TRUST_PARENT trusts the rule path's parent.
    rules({ [path.dirname(co.root)]: "TRUST_FOLDER", [co.root]: "DO_NOT_TRUST" });
    expect(client(await data(co), "gemini").hooksRun).toBe(false);
    rules({ [path.join(co.root, "src")]: "TRUST_PARENT" });
    expect(client(await data(co), "gemini").hooksRun).toBe(true);
    // The environment, in Gemini's order: =false untrusts over a file rule, =true trusts, restricted mode untrusts.
    expect(client(await data(co, { GEMINI_CLI_TRUST_WORKSPACE: "false" }), "gemini").hooksRun).toBe(false);
    rules({});
    expect(client(await data(co, { GEMINI_CLI_TRUST_WORKSPACE: "true" }), "gemini").hooksRun).toBe(true);
    expect(
      client(await data(co, { GEMINI_CLI_TRUST_WORKSPACE: "true", GEMINI_RESTRICTED_MODE: "true" }), "gemini")
        .hooksRun,
    ).toBe(false);
    // Folder trust off in the user settings trusts every folder; hooks off there runs none.
    writeFileSync(
      path.join(co.home, ".gemini", "settings.json"),
      JSON.stringify({ security: { folderTrust: { enabled: false } } }),
    );
    expect(client(await data(co), "gemini").hooksRun).toBe(true);
    writeFileSync(
      path.join(co.home, ".gemini", "settings.json"),
      JSON.stringify({ hooksConfig: { enabled: false } }),
    );
    const off = await data(co, { GEMINI_CLI_TRUST_WORKSPACE: "true" });
    expect(check(off, "gemini folder trust")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("hooksConfig.enabled is false"),
    });
    // Copilot's config folder moves with COPILOT_HOME; COPILOT_ALLOW_ALL trusts.
    const elsewhere = path.join(co.home, "copilot-home");
    mkdirSync(elsewhere);
    expect(client(await data(co, { COPILOT_HOME: elsewhere }), "copilot").hooksRun).toBe(false);
    writeFileSync(path.join(elsewhere, "config.json"), JSON.stringify({ trustedFolders: [co.root] }));
    expect(client(await data(co, { COPILOT_HOME: elsewhere }), "copilot").hooksRun).toBe(true);
    expect(
      client(
        await data(co, { COPILOT_HOME: path.join(co.home, "none"), COPILOT_ALLOW_ALL: "true" }),
        "copilot",
      ).hooksRun,
    ).toBe(true);
    // OpenCode loads no project plugin under OPENCODE_DISABLE_PROJECT_CONFIG (measured).
    const oc = await data(co, { OPENCODE_DISABLE_PROJECT_CONFIG: "1" });
    expect(check(oc, "opencode plugin loading")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("OPENCODE_DISABLE_PROJECT_CONFIG is set"),
    });
  });

  it("names each modified client file, says which wiring fails open, and that a plugin that does not load leaves OpenCode unguarded; init --upgrade repairs them", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const edit = (rel: string, f: (o: any) => void) => {
      const o = JSON.parse(readFileSync(path.join(co.root, rel), "utf8"));
      f(o);
      writeFileSync(path.join(co.root, rel), JSON.stringify(o));
    };
    edit(".gemini/settings.json", (o) => (o.hooks.BeforeTool[0].hooks[0].timeout = 30)); // seconds, not ms
    edit(
      ".github/hooks/cohent.json",
      (o) => (o.hooks.preToolUse[0] = { type: "http", url: "http://127.0.0.1:9/" }),
    );
    edit(".cursor/hooks.json", (o) => delete o.hooks.preToolUse[0].failClosed);
    const plugin = path.join(co.root, ".opencode", "plugin", "cohent.js");
    writeFileSync(plugin, readFileSync(plugin, "utf8").replace("export const", "export cont"));
    const d = await data(co);
    expect(d.code).toBe(1);
    expect(check(d, "gemini wiring")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining(
        "MODIFIED since cohent init wrote it: .gemini/settings.json: hook entry BeforeTool timeout changed.",
      ),
    });
    expect(check(d, "gemini fails closed")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("fails OPEN"),
    });
    expect(check(d, "copilot wiring").detail).toContain(
      ".github/hooks/cohent.json: hook entry preToolUse removed",
    );
    expect(check(d, "copilot fails closed").status).toBe("fail");
    expect(check(d, "cursor wiring").detail).toContain("hook entry preToolUse failClosed changed");
    expect(check(d, "cursor fails closed").status).toBe("fail");
    expect(check(d, "opencode wiring").detail).toContain(
      ".opencode/plugin/cohent.js: plugin changed (OpenCode skips a plugin it cannot load, silently)",
    );
    expect(check(d, "opencode fails closed").status).toBe("fail");
    expect(d.failsClosed).toMatchObject({ copilot: false, gemini: false, cursor: false, opencode: false });

    expect((await run(co, ["init", "--upgrade"], { env: { SHELL: "/bin/sh" } })).code).toBe(0);
    const fixed = await data(co);
    for (const host of ["copilot", "gemini", "cursor", "opencode"]) {
      expect(check(fixed, `${host} wiring`)?.status, host).toBe("ok");
      expect(check(fixed, `${host} fails closed`)?.status, host).toBe("ok");
    }
    // A checkout of an earlier release has no such file: doctor says the client runs no Cohent hook there.
    rmSync(path.join(co.root, ".gemini", "settings.json"));
    expect(check(await data(co), "gemini wiring")).toMatchObject({
      status: "fail",
      detail:
        ".gemini/settings.json is missing: Gemini CLI runs no Cohent hook in this checkout. Run cohent init --upgrade and commit.",
    });
  });

  it("loads the plugin the way OpenCode does, and says why one does not load", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
    const plugin = path.join(co.root, ".opencode", "plugin", "cohent.js");
    expect(pluginLoads(co.root)).toEqual({ ok: true, why: "it loads and its factory returns the hooks" });
    writeFileSync(plugin, `throw new Error("at load");\nexport const P = async () => ({});\n`);
    expect(pluginLoads(co.root)).toEqual({ ok: false, why: expect.stringContaining("Error: at load") });
    writeFileSync(plugin, "export const A = async () => ({});\nexport const B = async () => ({});\n");
    expect(pluginLoads(co.root).why).toBe("it exports 2 functions, not one plugin");
    writeFileSync(plugin, `export const P = async () => ({ "tool.execute.before": "refuse" });\n`);
    expect(pluginLoads(co.root).why).toBe(
      "its factory returns no tool.execute.before, tool.execute.after, chat.message, event",
    );
    writeFileSync(plugin, `export const P = async () => { throw new Error("factory"); };\n`);
    expect(pluginLoads(co.root).ok).toBe(false);
    rmSync(plugin);
    expect(pluginLoads(co.root)).toEqual({ ok: false, why: ".opencode/plugin/cohent.js is missing" });
  });
});

describe("doctor checks the wiring init writes, from init's own list", () => {
  it("a Claude Code wiring without SubagentStop and SessionEnd fails, naming both; init's own passes", async () => {
    const co = await makeCheckout(null);
    init({ cwd: co.root, server: "http://127.0.0.1:9", repo: "acme/shop", bundle: await builtAdapter() });
    const claudeHooks = async () => {
      const r = await run(co, ["doctor", "--json"]);
      return JSON.parse(r.stdout).data.checks.find((c: { name: string }) => c.name === "claude hooks");
    };
    expect(await claudeHooks()).toMatchObject({ status: "ok" });
    const file = path.join(co.root, ".claude", "settings.json");
    const settings = JSON.parse(readFileSync(file, "utf8"));
    delete settings.hooks.SubagentStop;
    delete settings.hooks.SessionEnd;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    const missing = await claudeHooks();
    expect(missing.status).toBe("fail");
    expect(missing.detail).toContain("for SubagentStop, SessionEnd;");
  });
});
