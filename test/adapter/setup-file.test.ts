import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fileUrlOf, pathOfFileUrl } from "../../adapter/src/loader/loader-handoff.js";
import { makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * doctor, init and bootstrap live in the setup file next to cohent.cjs (adapter/src/loader/loader-setup.ts),
 * not in the bundle every hook compiles. The built adapter, run as people type it.
 */
describe("the setup file (doctor, init, bootstrap)", () => {
  let co: Checkout | null = null;
  afterEach(() => {
    if (co) rmSync(path.dirname(co.root), { recursive: true, force: true });
    co = null;
  });
  const setupFile = (c: Checkout) => path.join(c.root, ".cohent", "cohent-setup.cjs");

  it("doctor, init and bootstrap are not in the bundle the hooks compile", async () => {
    co = await makeCheckout(null);
    const adapter = ["cohent.cjs", "cohent-core.js"]
      .map((n) => readFileSync(path.join(co!.root, ".cohent", n), "utf8"))
      .join("\n");
    const setup = readFileSync(setupFile(co), "utf8");
    // Texts only doctor and init print, present in the setup file and absent from cohent.cjs.
    for (const text of ["Codex will run the hooks here", "Hooks run here (trust gates)"]) {
      expect(setup).toContain(text);
      expect(adapter).not.toContain(text);
    }
    expect(statSync(setupFile(co)).size).toBeGreaterThan(10_000);
  });

  it("doctor runs from it", async () => {
    co = await makeCheckout(null);
    const r = await run(co, ["doctor"]);
    expect(r.stdout).toContain("hook entry: the hooks run .cohent/cohent.cjs.");
    expect(r.stderr).not.toContain("cohent-setup.cjs");
  });

  const repair = "Repair: npx cohent init --upgrade";
  for (const [what, damage, says] of [
    ["missing", (f: string) => rmSync(f), "is missing"],
    ["broken", (f: string) => writeFileSync(f, "this is not ( javascript"), "is broken ("],
    [
      "from another build",
      (f: string) => writeFileSync(f, 'module.exports = { cohentSetupId: "0123", doctor() {} };'),
      "is not from the same build as the cohent.cjs beside it",
    ],
  ] as const) {
    it(`a setup file ${what}: doctor, init and bootstrap name it and the repair, exit 1`, async () => {
      co = await makeCheckout(null);
      damage(setupFile(co));
      for (const command of [["doctor"], ["init", "--upgrade"], ["bootstrap", "--approve"]]) {
        const r = await run(co, command);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`cohent ${command[0]}: .cohent/cohent-setup.cjs ${says}`);
        expect(r.stderr).toContain(repair);
      }
      const j = await run(co, ["doctor", "--json"]);
      expect(j.code).toBe(1);
      const env = JSON.parse(j.stdout);
      expect(env.ok).toBe(false);
      expect(env.error.code).toBe("NOT_CONFIGURED");
      expect(env.error.message).toContain(says);
      expect(env.error.message).toContain(repair);
    });
  }

  it("a setup file missing leaves the hooks as they were: a Read is allowed, an unconfigured edit refused", async () => {
    co = await makeCheckout(null);
    rmSync(setupFile(co));
    const read = await run(co, ["hook"], {
      stdin: JSON.stringify({
        hook_event_name: "PreToolUse",
        session_id: "s",
        cwd: co.root,
        tool_name: "Read",
        tool_input: { file_path: "x" },
      }),
    });
    expect(read.code).toBe(0);
    expect(read.stdout).toBe("");
    const edit = await run(co, ["hook"], {
      stdin: JSON.stringify({
        hook_event_name: "PreToolUse",
        session_id: "s",
        cwd: co.root,
        tool_name: "Write",
        tool_input: { file_path: path.join(co.root, "a.ts"), content: "x" },
      }),
    });
    expect(JSON.parse(edit.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  });
});

describe("fileUrlOf: the loader's own URL, as pathToFileURL answers", () => {
  const paths = [
    "/tmp/a/b.cjs",
    "/home/u/repo/.cohent/cohent.cjs",
    "/a b/c.cjs",
    "/a%b/c",
    "/a#b/c",
    "/a?b",
    "/é/x",
    "/a~b/x_y-z.cjs",
    "/a//b",
    "/a/./b",
    "/a/../b",
    "/a/.",
    "/a/..",
    "/a/...",
    "/..a/b",
    "/",
    "/a/",
    "relative/path",
  ];
  for (const p of paths)
    it(JSON.stringify(p), () => {
      expect(fileUrlOf(p)).toBe(pathToFileURL(p).href);
    });
});

describe("pathOfFileUrl: the way back, as fileURLToPath answers", () => {
  const urls = [
    "file:///tmp/a/b.cjs",
    "file:///home/u/repo/.cohent/cohent.cjs",
    "file:///a%20b/c.cjs",
    "file:///%C3%A9/x",
    "file:///a/./b",
    "file:///a/../b",
    "file:///a//b",
    "file://localhost/a/b",
    "file:///a/b?x=1",
    "file:///a/b#h",
    "file:///",
  ];
  for (const u of urls)
    it(u, () => {
      expect(pathOfFileUrl(u)).toBe(fileURLToPath(u));
    });
  for (const p of ["/tmp/a/b.cjs", "/a b/c.cjs", "/é/x", "/a~b/x_y-z.cjs"])
    it(`round trip ${p}`, () => {
      expect(pathOfFileUrl(fileUrlOf(p))).toBe(p);
    });
});
