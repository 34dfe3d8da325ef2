import { describe, expect, it } from "vitest";
import {
  agentText,
  MAX_SOCKET_PATH,
  sameCaller,
  socketFits,
  warmDir,
  warmName,
  warmWanted,
  type Caller,
} from "../../adapter/src/loader/warm-route.js";

/** The warm guard's routing (adapter/src/loader/warm-route.ts): who may be answered by whom. */

const base: Caller = {
  uid: 1000,
  cwd: "/work/repo",
  dir: "/work/repo/.cohent",
  stamps: ["1:20787:1.5:1.5", "2:360411:1.5:1.5"],
  env: { PATH: "/usr/bin", HOME: "/home/a", COHENT_AGENT_TOKEN: "tok-a" },
};

describe("warm guard routing", () => {
  it("names a caller by its user, checkout, build and agent", () => {
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
    ["another working folder", { cwd: "/work/repo/src" }],
    ["a variable a client sets for one event", { env: { ...base.env, CLAUDE_ENV_FILE: "/tmp/e.sh" } }],
    ["another PATH", { env: { ...base.env, PATH: "/opt/bin:/usr/bin" } }],
    ["an empty GIT_DIR", { env: { ...base.env, GIT_DIR: "" } }],
  ])("%s is the same agent: the same guard, which decides with the call's own variables", (_what, change) => {
    const other = { ...base, ...change };
    expect(warmName(other)).toBe(warmName(base));
    expect(sameCaller(other, base)).toBe(true);
  });

  it.each<[string, Partial<Caller>]>([
    ["another user", { uid: 1001 }],
    ["another checkout", { dir: "/work/other/.cohent" }],
    ["another cohent.cjs", { stamps: ["1:20788:1.5:1.5", base.stamps[1]!] }],
    ["another cohent-core.js (an upgrade)", { stamps: [base.stamps[0]!, "3:360411:1.5:1.5"] }],
    ["another agent's token", { env: { ...base.env, COHENT_AGENT_TOKEN: "tok-b" } }],
    ["another Cohent setting", { env: { ...base.env, COHENT_HOOK_DEADLINE_MS: "1500" } }],
    ["no token in the environment", { env: { PATH: "/usr/bin", HOME: "/home/a" } }],
    ["another HOME (another credential store)", { env: { ...base.env, HOME: "/home/b" } }],
    ["an empty Cohent setting where there was none", { env: { ...base.env, COHENT_CLIENT: "" } }],
  ])("%s is another caller: another name, and never answered by this guard", (_what, change) => {
    const other = { ...base, ...change };
    expect(warmName(other)).not.toBe(warmName(base));
    expect(sameCaller(other, base)).toBe(false);
    expect(sameCaller(base, other)).toBe(false);
  });

  it("a twin is the same caller", () => {
    expect(sameCaller({ ...base, env: { ...base.env } }, base)).toBe(true);
  });

  it("keys on the agent's variables only, in a fixed order", () => {
    expect(
      agentText({ COHENT_B: "2", HOME: "/h", PATH: "/usr/bin", COHENT_A: "1", COHENT_C: undefined }),
    ).toBe("COHENT_A=1\0COHENT_B=2\0HOME=/h\0");
  });

  it("uses a folder only where a socket's path fits", () => {
    const name = warmName(base);
    const fits = "/" + "d".repeat(MAX_SOCKET_PATH - name.length - 2);
    expect(socketFits(fits, name)).toBe(true);
    expect(socketFits(`${fits}x`, name)).toBe(false);
    // The temporary name a guard listens under first is shorter than its name.
    expect(`${process.pid}.tmp`.length).toBeLessThan(name.length);
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
