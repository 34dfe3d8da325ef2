import { describe, expect, it } from "vitest";
import { CohentError, covers, normalizeRepoPath, patternsOverlap, scopeCovers } from "@cohent/protocol";
import { arbitrate } from "../../backend/src/core/arbitrate.js";

describe("normalizeRepoPath", () => {
  it.each([
    ["app/checkout", "app/checkout"],
    ["./app//checkout/", "app/checkout"],
    ["app/./x/../checkout.ts", "app/checkout.ts"],
    ["app\\win\\file.ts", "app/win/file.ts"],
    [".", "**"],
    ["src/**/*.ts", "src/**/*.ts"],
  ])("%s -> %s", (raw, expected) => expect(normalizeRepoPath(raw)).toBe(expected));

  it.each([
    ["/repo/app/x.ts", "/repo", "app/x.ts"],
    ["/repo", "/repo", "**"],
    ["C:\\work\\repo\\a.ts", "C:/work/repo", "a.ts"],
  ])("absolute %s inside %s -> %s", (raw, root, expected) =>
    expect(normalizeRepoPath(raw, root)).toBe(expected),
  );

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["a\0b", "NUL"],
    ["../etc/passwd", "escapes"],
    ["app/../../x", "escapes"],
    ["/etc/passwd", "absolute"],
    ["!src/**", "negated"],
    ["a/".repeat(300), "longer"],
  ])("refuses %j (%s)", (raw, why) => {
    expect(() => normalizeRepoPath(raw)).toThrow(CohentError);
    try {
      normalizeRepoPath(raw);
    } catch (e) {
      expect((e as CohentError).code).toBe("INVALID_PATH");
      expect((e as CohentError).message.toLowerCase()).toContain(why.toLowerCase());
    }
  });
  it("refuses an absolute path outside the given repository", () => {
    expect(() => normalizeRepoPath("/other/x.ts", "/repo")).toThrow(/outside the repository/);
    expect(() => normalizeRepoPath("/repository/x.ts", "/repo")).toThrow(/outside the repository/);
  });
});

describe("patternsOverlap", () => {
  const table: [string, string, boolean][] = [
    // literals and directory prefixes
    ["app/checkout", "app/checkout", true],
    ["app", "app/checkout/x.ts", true],
    ["app/checkout/x.ts", "app", true],
    ["app/checkout", "app/checkout-v2", false],
    ["app/a.ts", "app/b.ts", false],
    ["**", "anything/at/all.ts", true],
    // literal against glob
    ["src/a.ts", "src/*.ts", true],
    ["src/a.css", "src/*.ts", false],
    ["src", "src/**/*.ts", true],
    ["src/dir", "src/**/*.ts", true],
    ["src/dir", "src/*.ts", false],
    ["lib", "src/**", false],
    ["src/a/b.ts", "src/*", true],
    ["docs/x.md", "**/*.md", true],
    ["docs/x.md", "**/*.ts", false],
    [".github/workflows/ci.yml", ".github/**", true],
    ["src/a.ts", "src/{a,b}.ts", true],
    ["src/c.ts", "src/{a,b}.ts", false],
    // glob against glob
    ["src/**/*.ts", "src/**/*.css", false],
    ["src/**/*.ts", "src/a/*", true],
    ["src/**/*.ts", "src/a/**/*.css", false],
    ["src/*.ts", "src/*.ts", true],
    ["src/*.ts", "lib/*.ts", false],
    ["**/*.spec.ts", "tests/**", true],
    ["**/*.spec.ts", "src/**/*.ts", true],
    ["src/a/**", "src/b/**", false],
    ["src/{a,b}/**", "src/b/x.ts", true],
    ["src/[ab].ts", "src/a.ts", true],
    ["src/?.ts", "src/ab.ts", false],
  ];
  it.each(table)("%s vs %s -> %s", (a, b, expected) => {
    expect(patternsOverlap(a, b)).toBe(expected);
    expect(patternsOverlap(b, a)).toBe(expected);
  });

  it("is case-sensitive unless the repository says otherwise", () => {
    expect(patternsOverlap("App/Checkout.ts", "app/checkout.ts")).toBe(false);
    expect(patternsOverlap("App/Checkout.ts", "app/checkout.ts", { caseInsensitive: true })).toBe(true);
    expect(patternsOverlap("SRC/**", "src/a.ts", { caseInsensitive: true })).toBe(true);
  });
});

describe("covers (a write inside the declared scope)", () => {
  it.each([
    [["app/checkout"], "app/checkout/validation.ts", true],
    [["app/checkout"], "app/checkout", true],
    [["app/checkout"], "app/checkout2/x.ts", false],
    [["src/**/*.ts"], "src/a/b.ts", true],
    [["src/**/*.ts"], "src/a/b.css", false],
    [["src/*"], "src/dir/file.ts", true],
    [["**"], "x/y.ts", true],
    [[], "x.ts", false],
  ])("%j covers %s -> %s", (scope, target, expected) => expect(scopeCovers(scope, target)).toBe(expected));
  it("honours case-insensitivity", () => {
    expect(covers("App", "app/x.ts")).toBe(false);
    expect(covers("App", "app/x.ts", { caseInsensitive: true })).toBe(true);
  });
});

describe("arbitrate", () => {
  const peer = (intentId: string, paths: string[]) => ({
    intentId,
    person: "bob",
    client: "Claude Code",
    model: null,
    objective: "o",
    paths,
  });
  it("names each overlapping peer with the overlapping paths on both sides", () => {
    const conflicts = arbitrate(
      ["app/checkout", "docs/x.md"],
      [
        peer("wki_1", ["app/checkout/validation.ts", "lib"]),
        peer("wki_2", ["lib"]),
        peer("wki_3", ["docs/**"]),
      ],
    );
    expect(conflicts.map((c) => [c.intentId, c.paths, c.theirPaths])).toEqual([
      ["wki_1", ["app/checkout"], ["app/checkout/validation.ts"]],
      ["wki_3", ["docs/x.md"], ["docs/**"]],
    ]);
    expect(conflicts[0]).toMatchObject({ person: "bob", client: "Claude Code", model: null });
  });
  it("finds nothing between disjoint scopes", () => {
    expect(arbitrate(["a"], [peer("wki_1", ["b"])])).toEqual([]);
  });
  it("an empty scope overlaps nothing", () => {
    expect(arbitrate([], [peer("wki_1", ["**"])])).toEqual([]);
  });
});
