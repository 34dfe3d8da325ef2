import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { perCall } from "../../adapter/src/loader/warm-serve.js";

/**
 * The warm guard decides each call with the caller's own environment and working folder
 * (warm-serve.ts perCall): what the adapter's code reads and what the programs it starts inherit,
 * for calls that overlap as for calls one after the other; outside a call, the guard's own.
 */

const ownEnv = process.env;
const ownCwd = process.cwd;
afterEach(() => {
  process.env = ownEnv;
  process.cwd = ownCwd;
});

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("a call's environment and folder in the warm guard", () => {
  it("are the caller's own, call by call, however the calls overlap", async () => {
    const asCaller = perCall();
    const seen = async () => {
      await tick();
      const child = execFileSync("sh", ["-c", 'printf %s "$ONE_CALL"'], { encoding: "utf8" });
      await tick();
      return { var: process.env.ONE_CALL, cwd: process.cwd(), child, keys: Object.keys(process.env).sort() };
    };
    const a = { cwd: "/work/a", env: { ONE_CALL: "a", PATH: ownEnv.PATH } };
    const b = { cwd: "/work/b", env: { PATH: ownEnv.PATH } };
    const [ra, rb] = await Promise.all([asCaller(a, seen), asCaller(b, seen)]);
    expect(ra).toEqual({ var: "a", cwd: "/work/a", child: "a", keys: ["ONE_CALL", "PATH"] });
    expect(rb).toEqual({ var: undefined, cwd: "/work/b", child: "", keys: ["PATH"] });
    expect(process.env.PATH).toBe(ownEnv.PATH);
    expect(process.cwd()).toBe(ownCwd.call(process));
  });

  it("a call's own writes stay its own", async () => {
    const asCaller = perCall();
    const env = { X: "1" };
    await asCaller({ cwd: "/", env }, async () => {
      process.env.X = "2";
      delete process.env.Y;
      expect(process.env.X).toBe("2");
      expect("X" in process.env).toBe(true);
    });
    expect(env.X).toBe("1");
    expect(process.env.X).toBe(ownEnv.X);
  });
});
