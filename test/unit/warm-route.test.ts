import { describe, expect, it } from "vitest";
import {
  envText,
  sameCaller,
  warmDir,
  warmName,
  warmWanted,
  type Caller,
} from "../../adapter/src/loader/warm-route.js";

/** The warm guard's routing (adapter/src/loader/warm-route.ts): who may be answered by whom. */

const base: Caller = {
  uid: 1000,
  cwd: "/work/repo",
  stamps: ["1:20787:1.5:1.5", "2:360411:1.5:1.5"],
  env: { PATH: "/usr/bin", HOME: "/home/a", COHENT_AGENT_TOKEN: "tok-a" },
};

describe("warm guard routing", () => {
  it("names a caller by everything its answer depends on", () => {
    const name = warmName(base);
    expect(name).toMatch(/^[0-9a-f]{16}\.sock$/);
    // The same caller, its environment in another order: the same guard.
    expect(
      warmName({ ...base, env: { COHENT_AGENT_TOKEN: "tok-a", HOME: "/home/a", PATH: "/usr/bin" } }),
    ).toBe(name);
    // An unset variable is no variable.
    expect(warmName({ ...base, env: { ...base.env, EXTRA: undefined } })).toBe(name);
  });

  it.each<[string, Partial<Caller>]>([
    ["another user", { uid: 1001 }],
    ["another folder", { cwd: "/work/repo/src" }],
    ["another cohent.cjs", { stamps: ["1:20788:1.5:1.5", base.stamps[1]!] }],
    ["another cohent-core.js (an upgrade)", { stamps: [base.stamps[0]!, "3:360411:1.5:1.5"] }],
    ["another agent's token", { env: { ...base.env, COHENT_AGENT_TOKEN: "tok-b" } }],
    ["one variable more", { env: { ...base.env, COHENT_HOOK_DEADLINE_MS: "1500" } }],
    ["one variable less", { env: { PATH: "/usr/bin", HOME: "/home/a" } }],
    ["an empty value where there was none", { env: { ...base.env, GIT_DIR: "" } }],
  ])("%s is another caller: another name, and never answered by this guard", (_what, change) => {
    const other = { ...base, ...change };
    expect(warmName(other)).not.toBe(warmName(base));
    expect(sameCaller(other, base)).toBe(false);
    expect(sameCaller(base, other)).toBe(false);
  });

  it("a twin is the same caller", () => {
    expect(sameCaller({ ...base, env: { ...base.env } }, base)).toBe(true);
  });

  it("compares the environment variable by variable, not as one text", () => {
    // A value with the text's separator in it (no real environment has one) is still one variable.
    const one = { ...base, env: { A: "1\0B=2" } };
    const two = { ...base, env: { A: "1", B: "2" } };
    expect(sameCaller(one, two)).toBe(false);
    expect(envText({ B: "2", A: "1", C: undefined })).toBe("A=1\0B=2\0");
  });

  it.each<[Record<string, string | undefined>, number, string]>([
    [{}, 1000, "/tmp/cohent-warm-1000"],
    [{ TMPDIR: "/var/tmp/" }, 1000, "/var/tmp/cohent-warm-1000"],
    [{ TMPDIR: "relative/tmp" }, 0, "/tmp/cohent-warm-0"],
  ])("keeps one folder per user in the temporary folder: %j uid %i → %s", (env, uid, dir) => {
    expect(warmDir(env, uid)).toBe(dir);
  });

  it.each<[Record<string, string | undefined>, string, boolean]>([
    [{}, "linux", true],
    [{}, "darwin", true],
    [{ COHENT_WARM: "0" }, "linux", false],
    [{ COHENT_WARM: "1" }, "linux", true],
    [{}, "win32", false],
  ])("is wanted with %j on %s: %s", (env, platform, wanted) => {
    expect(warmWanted(env, platform)).toBe(wanted);
  });
});
