import { describe, expect, it } from "vitest";
import { warmCheck, type WarmFacts } from "../../adapter/src/installer/doctor-warm.js";

/** doctor's warm guard line (adapter/src/installer/doctor-warm.ts): on, off, or cold for a reason it names. */
describe("doctor: the warm guard line", () => {
  const on: WarmFacts = { wanted: true, dir: "/tmp/cohent-warm-1000", folder: "private", running: 2 };
  it.each<[string, WarmFacts, "ok" | "warn", RegExp]>([
    ["on, two running", on, "ok", /^on: .*\/tmp\/cohent-warm-1000.* 2 running for this checkout\.$/],
    ["on, one running", { ...on, running: 1 }, "ok", / 1 running for this checkout\.$/],
    ["on, not countable here", { ...on, running: null }, "ok", /10 minutes idle\.$/],
    ["on, no folder yet", { ...on, folder: "missing", running: 0 }, "ok", /^on: /],
    ["off", { ...on, wanted: false }, "ok", /^off \(COHENT_WARM=0/],
    [
      "a folder others can use",
      { ...on, folder: "shared" },
      "warn",
      /not a folder only you can use.*every call runs cold/,
    ],
    [
      "a folder too deep for a socket",
      { ...on, fits: false },
      "warn",
      /too deep for a Unix socket.*runs cold/,
    ],
  ])("%s", (_what, facts, status, detail) => {
    const c = warmCheck(facts);
    expect(c.name).toBe("warm guard");
    expect(c.status).toBe(status);
    expect(c.detail).toMatch(detail);
  });
});
