import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeLines, supportedLines } from "../../scripts/node-lines.mjs";

/** The supported Node.js lines are stated once (the root engines); everything else says them in its words or not at all. */
const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

describe("the supported Node.js lines", () => {
  it.each([
    ["^20.19.0 || ^22.12.0 || ^24.0.0 || ^26.0.0", "Node.js 20.19+, 22.12+, 24 or 26"],
    ["^24.0.0", "Node.js 24"],
    ["^22.12.0 || ^24.1.0", "Node.js 22.12+ or 24.1+"],
  ])("%s reads %s", (range, words) => {
    expect(describeLines(supportedLines(range))).toBe(words);
  });

  it.each([">=20.19", "^20.19.0 || >=22", "20.x", "^20"])(
    "refuses %s: not one caret range a line",
    (range) => {
      expect(() => supportedLines(range)).toThrow(/is not one line's caret range/);
    },
  );

  it("the running Node is one of them", () => {
    const [major] = process.versions.node.split(".").map(Number);
    const line = supportedLines().find((l) => l.major === major);
    expect(line, `Node ${process.version}`).toBeDefined();
    const older = (a: string, b: string) => {
      const [x, y] = [a, b].map((v) => v.split(".").map(Number));
      for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! < y![i]!;
      return false;
    };
    expect(older(process.versions.node, line!.floor)).toBe(false);
  });

  it("README.md states them, once, in the words the engines read", () => {
    const readme = read("README.md");
    expect(readme.split(describeLines()).length - 1).toBe(1);
    // No second statement of a version to drift from the first.
    const rest = readme.replace(describeLines(), "");
    expect(rest.match(/Node(?:\.js)? \d\d(?:\.\d+)?(?:\+| or later)/g)).toBeNull();
  });

  it("the published package takes them from the workspace (scripts/pack.mjs), not from a copy", () => {
    expect(JSON.parse(read("package/package.json")).engines).toBeUndefined();
    expect(read("scripts/pack.mjs")).toMatch(/manifest\.engines = .*engines\.node/);
  });
});
