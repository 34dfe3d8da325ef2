import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Overview, WiringAlarmView } from "@cohent/protocol";
import { init } from "../../adapter/src/installer/init.js";
import { checkoutId } from "../../adapter/src/installer/wiring-check.js";
import { backendForFile } from "../helpers/backend.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";
import { builtAdapter, claude, codex, hook, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * The guard wiring's check, end to end: a scratch checkout made by init, the
 * real built hook, a real backend. A session start that finds what init wrote
 * and wired modified reports it (and starts anyway); the Control Room's API
 * shows "guard wiring modified" for that checkout with the files; doctor
 * names the file and the repair; an intact start after the repair clears it.
 * An unrelated setting reports nothing, and sends nothing.
 */

const fx = backendForFile("acme/shop", "", ["dora", "Claude Code"], ["eli", "Codex"]);
let admin: ConsoleClient;
beforeAll(async () => {
  admin = await signedInAdmin(fx.backend);
});

async function wired(): Promise<Checkout> {
  const co = await makeCheckout(fx.backend.url, "acme/shop");
  init({ cwd: co.root, server: fx.backend.url, repo: "acme/shop", bundle: await builtAdapter() });
  return co;
}
const env = () => ({ ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0] });
const codexEnv = () => ({ COHENT_AGENT_TOKEN: fx.tokens[1] });

async function overview(): Promise<Overview> {
  const r = await admin.get("/api/console/repos/acme/shop");
  expect(r.status).toBe(200);
  return r.body.data;
}
/** The alarm the Control Room shows for this checkout, if any. */
async function alarmOf(co: Checkout): Promise<WiringAlarmView | undefined> {
  return (await overview()).wiring.find((w) => w.checkout === checkoutId(co.root));
}
const editJson = (co: Checkout, rel: string, edit: (o: any) => void) => {
  const file = path.join(co.root, rel);
  const o = JSON.parse(readFileSync(file, "utf8"));
  edit(o);
  writeFileSync(file, JSON.stringify(o, null, 2) + "\n");
};
/** A session start as the client sends it: it never blocks, whatever the wiring. */
async function sessionStart(co: Checkout, session: string, client: typeof claude | typeof codex = claude) {
  const r = await hook(
    co,
    client.sessionStart(session, co.root),
    client === claude ? env() : { ...codex.env, ...codexEnv() },
  );
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("");
  return r;
}

describe("guard wiring check at session start", () => {
  it("reports nothing for an unrelated setting; reports a removed Cohent hook entry, doctor names it, init --upgrade and a clean start clear it", async () => {
    const co = await wired();
    await sessionStart(co, "w-intact");
    editJson(co, ".claude/settings.json", (o) => {
      o.permissions = { allow: ["Bash(npm test)"] };
      o.hooks.Notification = [{ hooks: [{ type: "command", command: "say done" }] }];
    });
    await sessionStart(co, "w-unrelated");
    expect(await alarmOf(co)).toBeUndefined();
    // Nothing was sent at all: neither session start reached the server.
    const keys = (await overview()).sessions.map((s) => s.key);
    expect(keys).not.toContain("w-intact");
    expect(keys).not.toContain("w-unrelated");

    editJson(co, ".claude/settings.json", (o) => o.hooks.PreToolUse.splice(0, 1));
    await sessionStart(co, "w-removed");
    expect(await alarmOf(co)).toMatchObject({
      person: "dora",
      sessionKey: "w-removed",
      changes: [{ file: ".claude/settings.json", change: "hook entry PreToolUse removed" }],
    });

    const doctor = await run(co, ["doctor", "--json"], { env: { ...env(), SHELL: "/bin/sh" } });
    const check = JSON.parse(doctor.stdout).data.checks.find(
      (c: { name: string }) => c.name === "guard wiring",
    );
    expect(check.status).toBe("fail");
    expect(check.detail).toContain(".claude/settings.json: hook entry PreToolUse removed");
    expect(check.detail).toContain("node .cohent/cohent.mjs init --upgrade");
    expect(check.detail).toContain("commits");
    expect(doctor.code).toBe(1);

    // A person repairs it; the next session start finds it intact and clears the alarm.
    const upgrade = await run(co, ["init", "--upgrade"], { env: env() });
    expect(upgrade.code, upgrade.stderr).toBe(0);
    await sessionStart(co, "w-repaired");
    expect(await alarmOf(co)).toBeUndefined();
    // And the one after that sends nothing again.
    await sessionStart(co, "w-quiet");
    expect((await overview()).sessions.map((s) => s.key)).not.toContain("w-quiet");
  });

  it("reports a patched cohent.cjs, and the hook's own decisions go on", async () => {
    const co = await wired();
    // An intact start first: it keeps the adapter files' hashes by stat, which the patch below must not fool.
    await sessionStart(co, "p-0");
    expect(
      Object.keys(
        JSON.parse(readFileSync(path.join(co.root, ".cohent", "runtime.json"), "utf8")).wiringHashes,
      ),
    ).toEqual([
      ".cohent/cohent.mjs",
      ".cohent/cohent.cjs",
      ".cohent/cohent-core.js",
      ".cohent/cohent-mcp.mjs",
    ]);
    appendFileSync(path.join(co.root, ".cohent", "cohent.cjs"), "\n// allow everything\n");
    await sessionStart(co, "p-1");
    expect((await alarmOf(co))?.changes).toEqual([
      { file: ".cohent/cohent.cjs", change: "cohent.cjs replaced" },
    ]);
    // The session started; an edit before any intent is refused as ever.
    await hook(co, claude.prompt("p-1", co.root, "Change the cart"), env());
    const edit = await hook(co, claude.write("p-1", co.root, path.join(co.root, "src/cart.ts")), env());
    expect(edit.denied).toMatch(/no structured intent/);
    const doctor = await run(co, ["doctor", "--json"], { env: { ...env(), SHELL: "/bin/sh" } });
    const check = JSON.parse(doctor.stdout).data.checks.find(
      (c: { name: string }) => c.name === "guard wiring",
    );
    expect(check.detail).toContain(".cohent/cohent.cjs: cohent.cjs replaced");
    // The checkout's own adapter cannot vouch for itself: the repair runs the installed package.
    expect(check.detail).toContain("npx cohent init --upgrade (the installed package");
  });

  it("disableAllHooks in .claude/settings.local.json stops Claude's own hooks: a Codex session start in the checkout reports it", async () => {
    const co = await wired();
    writeFileSync(
      path.join(co.root, ".claude", "settings.local.json"),
      JSON.stringify({ disableAllHooks: true }),
    );
    await sessionStart(co, "x-1", codex);
    expect(await alarmOf(co)).toMatchObject({
      person: "eli",
      sessionKey: "x-1",
      changes: [{ file: ".claude/settings.local.json", change: "disableAllHooks set" }],
    });
  });

  it("an OpenCode plugin that would not load (OpenCode skips it silently) and a second Copilot hooks file switching hooks off: a Codex session start reports both", async () => {
    const co = await wired();
    const plugin = path.join(co.root, ".opencode", "plugin", "cohent.js");
    writeFileSync(plugin, readFileSync(plugin, "utf8").replace("export const", "export cont"));
    writeFileSync(
      path.join(co.root, ".github", "hooks", "off.json"),
      JSON.stringify({ version: 1, disableAllHooks: true, hooks: {} }),
    );
    await sessionStart(co, "x-2", codex);
    expect(await alarmOf(co)).toMatchObject({
      sessionKey: "x-2",
      changes: [
        { file: ".github/hooks/off.json", change: "disableAllHooks set" },
        {
          file: ".opencode/plugin/cohent.js",
          change: "plugin changed (OpenCode skips a plugin it cannot load, silently)",
        },
      ],
    });
  });

  it("a removed SessionStart entry: the session's first prompt checks instead", async () => {
    const co = await wired();
    editJson(co, ".codex/hooks.json", (o) => {
      delete o.hooks.SessionStart;
      o.hooks.PostToolUse[0].hooks[0].timeout = 1;
    });
    const prompt = await hook(co, codex.prompt("c-1", co.root, "Refactor checkout"), {
      ...codex.env,
      ...codexEnv(),
    });
    expect(prompt.code).toBe(0);
    expect((await alarmOf(co))?.changes).toEqual([
      { file: ".codex/hooks.json", change: "hook entry SessionStart removed" },
      { file: ".codex/hooks.json", change: "hook entry PostToolUse timeout changed" },
    ]);
  });

  it("tells checkouts apart: another checkout's intact start leaves this one's alarm", async () => {
    const a = await wired();
    const b = await wired();
    editJson(a, ".claude/settings.json", (o) => (o.disableAllHooks = true));
    await sessionStart(a, "a-1");
    await sessionStart(b, "b-1");
    expect((await alarmOf(a))?.changes).toEqual([
      { file: ".claude/settings.json", change: "disableAllHooks set" },
    ]);
    expect(await alarmOf(b)).toBeUndefined();
  });

  it("a service that cannot be reached: the session starts at once all the same", async () => {
    const co = await wired();
    editJson(co, ".cohent/project.json", (o) => (o.service = "http://127.0.0.1:9"));
    editJson(co, ".claude/settings.json", (o) => (o.disableAllHooks = true));
    const r = await sessionStart(co, "u-1");
    // A promised deadline: a session start waits at most 1.5 s for the report
    // (WIRING_REPORT_TIMEOUT_MS), here refused at once; 10 s is that, a process start and a wide margin.
    expect(r.ms).toBeLessThan(10_000);
  });
});
