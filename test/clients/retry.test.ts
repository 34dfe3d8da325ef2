import { describe, expect, it } from "vitest";
import { MACHINE_CAUSES, machineCause, type FirstFailure } from "./retry.ts";

/** The real-client suite's retry policy (test/clients/retry.ts): which first failures let a retried pass count. */
const killed = { code: null, stderr: "…\n[harness] killed after 150000 ms" };
const ran = { code: 0, stderr: "" };
const idle = { avg1: 0.4, cpus: 2 };
const loaded = { avg1: 3.5, cpus: 2 };
const f = (error: string, runs: FirstFailure["runs"] = [ran], load = idle): FirstFailure => ({
  error,
  runs,
  load,
});

describe("machine causes of a first failure", () => {
  it.each<[string, FirstFailure, string | null]>([
    // The machine's.
    [
      "a run killed by the run timeout on a loaded machine",
      f("1 check(s) failed", [ran, killed], loaded),
      "run-timeout-under-load",
    ],
    ["ENOSPC in the error", f("Error: ENOSPC: no space left on device, write"), "disk-full"],
    [
      "No space left on device in a client's stderr",
      f("1 check(s) failed", [{ code: 1, stderr: "fatal: No space left on device" }]),
      "disk-full",
    ],
    [
      "the fake model's port in use",
      f("Error: listen EADDRINUSE: address already in use 127.0.0.1:41234"),
      "port-in-use",
    ],
    ["too many open files", f("Error: EMFILE: too many open files, open '/tmp/x'"), "out-of-resources"],
    ["a spawn that could not fork", f("Error: spawn /usr/bin/node EAGAIN"), "out-of-resources"],
    // The product's, or the suite's: a pass on the retry still fails.
    [
      "a run killed by the run timeout on an idle machine (a hang)",
      f("1 check(s) failed", [killed], idle),
      null,
    ],
    [
      "a run that exited on its own on a loaded machine",
      f("1 check(s) failed", [{ code: 1, stderr: "boom" }], loaded),
      null,
    ],
    [
      "the timeout marker with an exit code (the client exited by itself)",
      f("x", [{ code: 0, stderr: "[harness] killed after 150000 ms" }], loaded),
      null,
    ],
    ["a failed check", f("1 check(s) failed:\n- [outOfScope] an edit outside the scope was written"), null],
    ["every hook call exiting non-zero", f("3 check(s) failed:\n- [denyReachesModel] hook exited 1"), null],
    ["a thrown assertion", f("AssertionError: expected 'allow' to be 'deny'"), null],
    ["a vitest timeout", f("Error: Test timed out in 300000ms."), null],
  ])("%s", (_name, failure, id) => {
    expect(machineCause(failure)?.id ?? null).toBe(id);
  });

  it("is a short explicit list, each cause saying how it is recognised", () => {
    expect(MACHINE_CAUSES.map((c) => c.id)).toEqual([
      "run-timeout-under-load",
      "disk-full",
      "port-in-use",
      "out-of-resources",
    ]);
    for (const c of MACHINE_CAUSES) expect(c.what.length).toBeGreaterThan(40);
  });
});
