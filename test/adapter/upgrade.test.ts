import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, type Plugin } from "esbuild";
import { describe, expect, it } from "vitest";
import { COHENT_VERSION, MIN_ADAPTER_VERSION } from "@cohent/protocol";
import { backendForFile } from "../helpers/backend.js";
import { CODEX_GUARD_COMMAND, CODEX_HOOK_COMMAND, CODEX_TIMEOUT } from "../../adapter/src/installer/init.js";
import { trustHash } from "../../adapter/src/installer/trust.js";
import { adapterVersionVerdict, recordedVersionVerdict } from "../../client/src/service/version.js";
import { builtAdapter, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * Upgrades, client side: project.json records the adapter version, `init --upgrade` rewrites an
 * older checkout from the project file it already has and says which Codex hooks need trusting
 * again, doctor recomputes the trust hashes, and an adapter built as another version hears it.
 */

const fx = backendForFile("acme/shop", "");

/** Runs a given adapter file (not the checkout's own .cohent/cohent.mjs) in the checkout. Synchronous: only for commands that do not call the backend, which answers from this process. */
function runBundle(co: Checkout, bundle: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [bundle, ...args], {
    cwd: co.root,
    env: { PATH: process.env.PATH!, HOME: co.home, SHELL: "/bin/sh", ...env },
    encoding: "utf8",
  });
}

/** The adapter as another version would have built it: the same sources with protocol/src/version.ts saying `version`. */
async function adapterAs(version: string): Promise<string> {
  const outfile = path.join(mkdtempSync(path.join(os.tmpdir(), `cohent-adapter-${version}-`)), "cohent.mjs");
  const as: Plugin = {
    name: "version",
    setup(b) {
      b.onLoad({ filter: /protocol[\\/]src[\\/]version\.ts$/ }, (args) => ({
        contents: readFileSync(args.path, "utf8").replace(
          /COHENT_VERSION = "[^"]+"/,
          `COHENT_VERSION = "${version}"`,
        ),
        loader: "ts",
      }));
    },
  };
  await build({
    entryPoints: [path.resolve("adapter/src/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    logLevel: "silent",
    plugins: [as],
  });
  return outfile;
}

/**
 * A checkout as an older Cohent left it: no .gitattributes, an old adapter, the Codex hooks of the
 * release before `--host` (the bare PreToolUse handler among them), trusted, and no wiring for the
 * other clients.
 */
function olderCheckout(co: Checkout, codexHome: string) {
  writeFileSync(
    path.join(co.root, ".cohent", "project.json"),
    JSON.stringify(
      { version: 1, service: fx.backend.url, repository: "acme/shop", adapterVersion: "0.0.9" },
      null,
      2,
    ) + "\n",
  );
  writeFileSync(co.script, "// cohent.mjs 0.0.9\n");
  // doctor, init and bootstrap's own file, which earlier builds wrote beside the adapter.
  writeFileSync(path.join(co.root, ".cohent", "cohent-setup.cjs"), "// cohent-setup.cjs 0.0.9\n");
  const old = { type: "command", command: "node .cohent/cohent.cjs hook", timeout: CODEX_TIMEOUT };
  const events: [string, string, string | undefined][] = [
    ["SessionStart", "session_start", undefined],
    ["UserPromptSubmit", "user_prompt_submit", undefined],
    ["PreToolUse", "pre_tool_use", "*"],
    ["PostToolUse", "post_tool_use", "*"],
    ["Stop", "stop", undefined],
  ];
  const hooks = Object.fromEntries(
    events.map(([event, , matcher]) => [event, [{ ...(matcher ? { matcher } : {}), hooks: [old] }]]),
  );
  mkdirSync(path.join(co.root, ".codex"), { recursive: true });
  const hooksFile = path.join(co.root, ".codex", "hooks.json");
  writeFileSync(hooksFile, JSON.stringify({ hooks }, null, 2) + "\n");
  mkdirSync(codexHome, { recursive: true });
  const toml = [`[projects.${JSON.stringify(co.root)}]`, 'trust_level = "trusted"'];
  for (const [, label, matcher] of events)
    toml.push(
      `[hooks.state.${JSON.stringify(`${hooksFile}:${label}:0:0`)}]`,
      `trusted_hash = "${trustHash(label, matcher, old)}"`,
    );
  writeFileSync(path.join(codexHome, "config.toml"), toml.join("\n") + "\n");
  // Claude Code's settings of that release: plain commands without --host.
  mkdirSync(path.join(co.root, ".claude"), { recursive: true });
  const claude = { type: "command", command: 'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.cjs" hook' };
  writeFileSync(
    path.join(co.root, ".claude", "settings.json"),
    JSON.stringify({ hooks: { Stop: [{ hooks: [claude] }], SessionEnd: [{ hooks: [claude] }] } }),
  );
  return { old, hooksFile };
}

describe("cohent init --upgrade", () => {
  it("rewrites an older checkout, records the version, marks the bundles generated, and names the Codex hook whose trust hash changed", async () => {
    const co = await makeCheckout(null);
    spawnSync("git", ["init", "-q"], { cwd: co.root });
    const codexHome = path.join(co.home, "codex");
    const { old, hooksFile } = olderCheckout(co, codexHome);
    const bundle = await builtAdapter();

    const r = runBundle(co, bundle, ["init", "--upgrade", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const data = JSON.parse(r.stdout).data;
    expect(data).toMatchObject({
      repository: "acme/shop",
      service: fx.backend.url,
      previousAdapterVersion: "0.0.9",
      adapterVersion: COHENT_VERSION,
    });
    const status = Object.fromEntries(
      data.files.map((f: { path: string; status: string }) => [f.path, f.status]),
    );
    expect(status).toMatchObject({
      ".cohent/project.json": "updated",
      ".cohent/cohent.mjs": "updated",
      ".cohent/cohent-setup.cjs": "removed",
      ".codex/hooks.json": "updated",
      ".gitattributes": "created",
      ".github/hooks/cohent.json": "created",
      ".gemini/settings.json": "created",
      ".cursor/hooks.json": "created",
      ".opencode/plugin/cohent.js": "created",
    });
    // Every Codex command gains `--host codex` (and PreToolUse its wrapper): each must be trusted again.
    expect(data.retrust).toEqual(["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]);
    const hooks = JSON.parse(readFileSync(hooksFile, "utf8")).hooks;
    expect(hooks.Stop[0].hooks[0].command).toBe(CODEX_HOOK_COMMAND);
    expect(CODEX_HOOK_COMMAND).toBe("node .cohent/cohent.cjs hook --host codex");
    // Claude Code's entries gain --host claude in place: one Cohent entry per event, not a second one.
    const claude = JSON.parse(readFileSync(path.join(co.root, ".claude", "settings.json"), "utf8")).hooks;
    expect(claude.Stop).toEqual([
      {
        hooks: [
          { type: "command", command: 'node "$CLAUDE_PROJECT_DIR/.cohent/cohent.cjs" hook --host claude' },
        ],
      },
    ]);
    expect(claude.SessionEnd).toEqual(claude.Stop);

    const project = JSON.parse(readFileSync(path.join(co.root, ".cohent", "project.json"), "utf8"));
    expect(project).toEqual({
      version: 1,
      service: fx.backend.url,
      repository: "acme/shop",
      adapterVersion: COHENT_VERSION,
      adapterFiles: {
        "cohent.mjs": expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        "cohent.cjs": expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        "cohent-core.js": expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        "cohent-mcp.mjs": expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      },
    });
    expect(readFileSync(co.script, "utf8")).toBe(readFileSync(bundle, "utf8"));
    expect(existsSync(path.join(co.root, ".cohent", "cohent-setup.cjs"))).toBe(false);
    const attrs = readFileSync(path.join(co.root, ".gitattributes"), "utf8");
    expect(attrs).toContain(".cohent/cohent.mjs linguist-generated=true -diff");
    expect(attrs).toContain(".cohent/cohent-mcp.mjs linguist-generated=true -diff");
    expect(attrs).toContain(".cohent/cohent-core.js linguist-generated=true -diff");
    const check = spawnSync("git", ["check-attr", "linguist-generated", "diff", "--", ".cohent/cohent.mjs"], {
      cwd: co.root,
      encoding: "utf8",
    }).stdout;
    expect(check).toContain("linguist-generated: true");
    expect(check).toContain("diff: unset");

    // doctor recomputes the hashes: every entry is MODIFIED (the old hash is recorded, the new one expected).
    const doc = await run(co, ["doctor", "--json"], {
      env: {
        CODEX_HOME: codexHome,
        COHENT_AGENT_TOKEN: await fx.backend.issueToken("acme/shop", "una"),
        SHELL: "/bin/sh",
      },
    });
    const report = JSON.parse(doc.stdout).data;
    const pre = report.codex.hooks.find(
      (h: { event: string; ours: boolean; command: string }) => h.event === "PreToolUse" && h.ours,
    );
    expect(pre.recorded).toBe(trustHash("pre_tool_use", "*", old));
    expect(pre.expected).toBe(
      trustHash("pre_tool_use", "*", {
        type: "command",
        command: CODEX_GUARD_COMMAND,
        timeout: CODEX_TIMEOUT,
      }),
    );
    expect(pre.trust).toBe("modified");
    const trust = Object.fromEntries(
      report.codex.hooks
        .filter((h: { ours: boolean }) => h.ours)
        .map((h: { event: string; trust: string }) => [h.event, h.trust]),
    );
    expect(trust).toEqual({
      SessionStart: "modified",
      UserPromptSubmit: "modified",
      PreToolUse: "modified",
      PostToolUse: "modified",
      Stop: "modified",
    });
    expect(report.guarded.codex).toBe(false);
    const trustCheck = report.checks.find(
      (c: { name: string; detail: string }) =>
        c.name.includes("PreToolUse") || (c.detail.includes("MODIFIED") && c.detail.includes("trust")),
    );
    expect(trustCheck?.status).toBe("fail");
    expect(report.checks).toContainEqual({
      name: "adapter version",
      status: "ok",
      detail: expect.stringContaining(`adapter ${COHENT_VERSION}, server ${COHENT_VERSION}`),
    });
    expect(JSON.parse(readFileSync(hooksFile, "utf8")).hooks.PreToolUse[0].hooks[0].command).toBe(
      CODEX_GUARD_COMMAND,
    );

    // Human output of a second upgrade: nothing left to change.
    const again = runBundle(co, bundle, ["init", "--upgrade"]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(`adapter ${COHENT_VERSION} -> ${COHENT_VERSION}`);
    expect(again.stdout).toContain("nothing: the checkout is already at this version");
  });

  it("prints what changed, and refuses a checkout that was never initialized", async () => {
    const co = await makeCheckout(null);
    spawnSync("git", ["init", "-q"], { cwd: co.root });
    const bundle = await builtAdapter();
    const none = runBundle(co, bundle, ["init", "--upgrade"]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("cohent init: NOT_CONFIGURED: No .cohent/project.json");

    olderCheckout(co, path.join(co.home, "codex"));
    const r = runBundle(co, bundle, ["init", "--upgrade"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `Cohent upgraded acme/shop in ${co.root}: adapter 0.0.9 -> ${COHENT_VERSION}. Changed:`,
    );
    expect(r.stdout).toMatch(/updated +\.cohent\/cohent\.mjs/);
    expect(r.stdout).toMatch(/created +\.gitattributes/);
    expect(r.stdout).not.toMatch(/unchanged/);
    expect(r.stdout).toMatch(/Codex skips these hooks until a person trusts them \(again\).*PreToolUse/);
  });
});

describe("adapter version against the server", () => {
  it("an adapter older than the server accepts: doctor fails and says what to run; every command says it once on stderr", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    const token = await fx.backend.issueToken("acme/shop", "vic");
    copyFileSync(await adapterAs("0.0.1"), co.script);
    const doc = await run(co, ["doctor", "--json"], { env: { COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" } });
    const check = JSON.parse(doc.stdout).data.checks.find(
      (c: { name: string }) => c.name === "adapter version",
    );
    expect(check?.status, doc.stdout + doc.stderr).toBe("fail");
    expect(check.detail).toContain(
      `the committed adapter (.cohent/cohent.mjs 0.0.1) is older than the server accepts (${MIN_ADAPTER_VERSION} or later; the server is ${COHENT_VERSION})`,
    );
    expect(check.detail).toContain("cohent init --upgrade");
    expect(doc.code).toBe(1);

    const ctx = await run(co, ["context"], { env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "old-1" } });
    expect(ctx.stderr.match(/is older than the server accepts/g)).toHaveLength(1);
  });

  it("an adapter newer than the server: a warning naming both fixes; a matching one: ok; project.json out of step: a warning", async () => {
    const co = await makeCheckout(fx.backend.url, "acme/shop");
    const token = await fx.backend.issueToken("acme/shop", "wes");
    const mine = co.script + ".mine";
    copyFileSync(co.script, mine);
    copyFileSync(await adapterAs("9.0.0"), co.script);
    const doc = await run(co, ["doctor", "--json"], { env: { COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" } });
    const checks = JSON.parse(doc.stdout).data.checks.filter(
      (c: { name: string }) => c.name === "adapter version",
    );
    expect(checks[0].status).toBe("warn");
    expect(checks[0].detail).toContain(`is newer than the server (${COHENT_VERSION})`);
    expect(checks[0].detail).toContain("npm install -g --allow-scripts=better-sqlite3 cohent@9.0.0");

    copyFileSync(mine, co.script);
    writeFileSync(
      path.join(co.root, ".cohent", "project.json"),
      JSON.stringify({
        version: 1,
        service: fx.backend.url,
        repository: "acme/shop",
        adapterVersion: "0.0.9",
      }),
    );
    const same = await run(co, ["doctor", "--json"], {
      env: { COHENT_AGENT_TOKEN: token, SHELL: "/bin/sh" },
    });
    const verdicts = JSON.parse(same.stdout).data.checks.filter(
      (c: { name: string }) => c.name === "adapter version",
    );
    expect(verdicts.map((c: { status: string }) => c.status)).toEqual(["ok", "warn"]);
    expect(verdicts[1].detail).toContain(
      `records adapterVersion 0.0.9 but .cohent/cohent.mjs is ${COHENT_VERSION}: run cohent init --upgrade`,
    );
  });

  it("the verdicts, as a table", () => {
    const meta = { serverVersion: "1.4.0", minAdapterVersion: "1.2.0" };
    expect(adapterVersionVerdict(meta, "1.1.9")?.status).toBe("fail");
    expect(adapterVersionVerdict(meta, "1.2.0")?.status).toBe("ok");
    expect(adapterVersionVerdict(meta, "1.4.0")?.status).toBe("ok");
    expect(adapterVersionVerdict(meta, "1.10.0")?.status).toBe("warn");
    expect(adapterVersionVerdict({}, "1.0.0")).toBeNull();
    expect(recordedVersionVerdict(undefined, "1.0.0")).toBeNull();
    expect(recordedVersionVerdict("1.0.0", "1.0.0")).toBeNull();
    expect(recordedVersionVerdict("0.9.0", "1.0.0")?.status).toBe("warn");
  });
});
