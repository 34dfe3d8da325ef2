import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BOUNDS,
  CohentError,
  covers,
  normalizeRepoPath,
  normalizeRepoPaths,
  overBound,
  pathCost,
  patternsOverlap,
  scopeCovers,
  scopeOverlap,
  scopesOverlapping,
} from "@cohent/protocol";
import { arbitrate } from "../../backend/src/core/arbitrate.js";
import { grantOrder } from "../../backend/src/core/queue.js";

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
    // a glob that can match a directory covers what is inside it, against another glob too
    ["src/*", "src/a/**/*.ts", true],
    ["src/*/x", "src/a/x/**/*.ts", true],
    ["src/*.ts", "src/a/**/*.ts", false],
    // alternatives that hold a "/", nested ones, ranges, classes
    ["src/{a,b/c}/x.ts", "src/b/c/x.ts", true],
    ["src/{a,b/c}/x.ts", "src/b/x.ts", false],
    ["src/{a,{b,c}}.ts", "src/c.ts", true],
    ["log/{1..3}.txt", "log/2.txt", true],
    ["log/{1..3}.txt", "log/4.txt", false],
    ["log/{01..10}.txt", "log/07.txt", true],
    ["log/{01..10}.txt", "log/7.txt", false],
    ["src/[!a]*.ts", "src/a.ts", false],
    ["src/[!a]*.ts", "src/b.ts", true],
    ["src/[a-c]/**", "src/b/x", true],
    ["src/[a-c]/**", "src/d/x", false],
    ["src/?.{ts,js}", "src/a.js", true],
    // an empty alternative puts "//" side by side, folded as minimatch folds it; a "*" segment is never empty
    ["src/{a,}/x.ts", "src/x.ts", true],
    ["src/{x,}/b/**", "src/b/b.ts", true],
    ["src/{x,}/b/**", "src/c/*.ts", false],
    ["a/*/b.ts", "a/b.ts", false],
    ["*/b.ts", "b.ts", false],
    // worst cases: no backtracking, no expansion
    ["*a*a*a*a*a*a*a*a*b", "*a*a*a*a*a*a*a*a*c", false],
    ["*a*a*a*a*a*a*a*a*b", "*a*a*a*a*b", true],
    ["**/**/**/**/x/**", "**/**/y", true],
    ["src/b0/" + "{a,b}".repeat(30), "src/b0/" + "ab".repeat(15), true],
    ["src/b0/" + "{a,b}".repeat(30), "src/b0/" + "ab".repeat(14) + "ac", false],
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

describe("the cost of a pattern (matcher states, counted without expanding anything)", () => {
  it.each([
    ["src/checkout.ts", 0],
    ["app/checkout", 0],
    ["**", 0],
    ["src/*.ts", 9],
    ["src/*", 7],
    ["src/**/*.ts", 13],
    ["app/checkout/**", 16],
    ["docs/{a,b}.md", 12],
    ["{a,{b,c}}", 7],
    ["src/[abc].ts", 8],
    ["src/?.ts", 8],
    ["log/{1..10}.txt", 38],
    ["f{a..e}", 11],
    ["packages/*/src/**/*.{ts,tsx}", 31],
    ["*a".repeat(40) + "*b", 123],
    ["**/".repeat(60) + "*", 243],
    ["src/b0/" + "{a,b}".repeat(95), 387],
    ["x/{1..100000}", 700_002],
  ])("%s costs %i", (pattern, cost) => expect(pathCost(pattern)).toEqual({ cost, unsupported: null }));
});

describe("the path bounds, checked before anything is matched", () => {
  const code = (f: () => unknown) => {
    try {
      f();
      return "ok";
    } catch (e) {
      return (e as CohentError).code;
    }
  };
  const bomb = Array.from({ length: 64 }, (_, i) => `src/b${i}/` + "{a,b}".repeat(95));
  it("refuses the issue's request (64 x 'src/bN/' + '{a,b}' x 95) with PATHS_TOO_COMPLEX, saying the bound", () => {
    expect(() => normalizeRepoPaths(bomb)).toThrow(CohentError);
    try {
      normalizeRepoPaths(bomb);
    } catch (e) {
      expect((e as CohentError).code).toBe("PATHS_TOO_COMPLEX");
      expect((e as CohentError).status).toBe(400);
      expect((e as CohentError).message).toContain(`at most ${BOUNDS.pathCost} (pathCost)`);
      expect((e as CohentError).details).toMatchObject({ cost: 387, bound: BOUNDS.pathCost });
    }
  });
  it.each([
    ["one pattern over pathCost", ["src/" + "?".repeat(BOUNDS.pathCost)], "PATHS_TOO_COMPLEX"],
    ["a range counted, never expanded", ["x/{1..100000}"], "PATHS_TOO_COMPLEX"],
    ["nested alternatives at the bound", ["{a,{b,{c,{d,e}}}}/**"], "ok"],
    [
      "patterns each under pathCost, together over pathsCost",
      Array.from({ length: 6 }, (_, i) => `d${i}/` + "?".repeat(BOUNDS.pathCost - 4)),
      "PATHS_TOO_COMPLEX",
    ],
    [
      "64 plain paths of the longest length: plain paths cost nothing",
      Array.from({ length: 64 }, (_, i) => `${i}/`.padEnd(BOUNDS.pathChars, "x")),
      "ok",
    ],
    ["an extglob", ["src/*(a|b).ts"], "INVALID_PATH"],
    ["an extglob after a literal", ["src/**/+(a|b).ts"], "INVALID_PATH"],
    ["a POSIX class", ["src/[[:alpha:]]*.ts"], "INVALID_PATH"],
    ["a plain path with parentheses (no glob syntax: a literal)", ["src/@(x).ts"], "ok"],
  ])("%s -> %s", (_name, paths, expected) => expect(code(() => normalizeRepoPaths(paths))).toBe(expected));
  it("docs/configuration.md states the bounds BOUNDS holds", () => {
    const readme = readFileSync("docs/configuration.md", "utf8");
    const n = (v: number) => v.toLocaleString("en-US");
    expect(readme).toContain(`\`pathCost\` (${n(BOUNDS.pathCost)})`);
    expect(readme).toContain(`\`pathsCost\` (${n(BOUNDS.pathsCost)})`);
    expect(readme).toContain(`\`matchSteps\` (${n(BOUNDS.matchSteps)})`);
  });
  it("says how much a request's patterns cost together", () => {
    const paths = Array.from({ length: 6 }, (_, i) => `d${i}/` + "?".repeat(BOUNDS.pathCost - 4));
    expect(() => normalizeRepoPaths(paths)).toThrow(`at most ${BOUNDS.pathsCost} (pathsCost)`);
  });
});

describe("a pattern over the bounds (stored before them) counts as its literal base directory", () => {
  const bomb = "src/b0/" + "{a,b}".repeat(95);
  it.each([
    ["src/b0/x.ts", true],
    ["src/b0", true],
    ["src", true],
    ["src/b0/**/*.ts", true],
    ["src/b1/a", false],
    ["lib/x.ts", false],
  ])("%s vs the bomb -> %s", (other, expected) => {
    expect(patternsOverlap(bomb, other)).toBe(expected);
    expect(patternsOverlap(other, bomb)).toBe(expected);
  });
  it("covers its whole directory, and says why", () => {
    expect(covers(bomb, "src/b0/anything/at/all.ts")).toBe(true);
    expect(covers(bomb, "src/b1/x.ts")).toBe(false);
    expect(overBound(bomb)).toMatch(/over the bound of 128/);
    expect(overBound("src/**/*.ts")).toBeNull();
  });
  it("with no literal base, it is the whole repository (fail closed)", () => {
    expect(patternsOverlap("{a,b}".repeat(95), "lib/anything.ts")).toBe(true);
  });
  it("a stored claim whose patterns together cost over pathsCost: the costliest stand for their directories", () => {
    const claim = Array.from({ length: 8 }, (_, i) => `d${i}/x` + "?".repeat(BOUNDS.pathCost - 5));
    expect(scopeOverlap(["d7/x/y"], claim)).toEqual([]); // d7's glob still fits in the budget, matched as written
    expect(scopeOverlap(["d0/y"], claim)).toEqual([{ mine: "d0/y", theirs: claim[0] }]); // d0's counts as d0
  });
});

describe("matching work is bounded and linear in what it compares", () => {
  const steps = (f: (o: { budget: { steps: number } }) => unknown) => {
    const budget = { steps: 1e9 };
    f({ budget });
    return 1e9 - budget.steps;
  };
  const worst = "*a".repeat(40) + "*b"; // 123 states
  it("two globs: at most 2 x (states + 6) x (states + 6) steps, even when every pair of states is reachable", () => {
    const other = "*a".repeat(41); // 123 states, and no shared path with `worst`
    const used = steps((o) => expect(patternsOverlap(worst, other, o)).toBe(false));
    expect(used).toBeGreaterThan(1_000);
    expect(used).toBeLessThanOrEqual(2 * (123 + 6) * (123 + 6) + 1);
  });
  it("a path against a glob: at most characters x (states + 6) steps", () => {
    const target = "a".repeat(39) + "b"; // 39 a's: one short of a match, every star alive
    const used = steps((o) => expect(covers(worst, target, o)).toBe(false));
    expect(used).toBeLessThanOrEqual(target.length * (123 + 6));
  });
  it("so one pair of patterns within the bounds is always decided exactly, within one request's budget", () => {
    expect(2 * (BOUNDS.pathCost + 6) ** 2).toBeLessThan(BOUNDS.matchSteps);
    expect(BOUNDS.pathChars * (BOUNDS.pathCost + 6) + 16).toBeLessThan(BOUNDS.matchSteps);
  });
  it("out of budget, a comparison answers overlap (unsure: fail closed) and spends no more", () => {
    const budget = { steps: 50 };
    expect(patternsOverlap(worst, "*a".repeat(41), { budget })).toBe(true);
    expect(budget.steps).toBe(0);
    expect(scopeOverlap(["x/a.ts"], ["y/b.ts"], { budget })).toEqual([{ mine: "x/a.ts", theirs: "y/b.ts" }]);
  });
  it("two claims are compared by looking up anchors, not pair by pair", () => {
    const mine = Array.from({ length: 64 }, (_, i) => `src/mine/f${i}.ts`);
    const theirs = Array.from({ length: 64 }, (_, i) => `src/theirs/f${i}.ts`);
    expect(steps((o) => expect(scopeOverlap(mine, theirs, o)).toEqual([]))).toBeLessThanOrEqual(64 * 3);
  });
  it("all pairs of a room at once give what comparing every claim with every other gives (random rooms)", () => {
    let seed = 23;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    const parts = ["src", "src/a", "src/a/b", "src/b", "docs", "lib", ""];
    const leaves = ["x.ts", "y.md", "*.ts", "**", "**/*.md", "{x,y}.ts", "z", "*"];
    for (let round = 0; round < 40; round++) {
      const room = Array.from({ length: 2 + rnd(6) }, () => [
        ...new Set(
          Array.from({ length: 1 + rnd(4) }, () =>
            [parts[rnd(parts.length)], leaves[rnd(leaves.length)]].filter(Boolean).join("/"),
          ),
        ),
      ]);
      const pairwise: unknown[] = [];
      for (let a = 0; a < room.length; a++)
        for (let b = a + 1; b < room.length; b++) {
          const pairs = scopeOverlap(room[a]!, room[b]!);
          if (pairs.length)
            pairwise.push({
              a,
              b,
              mine: [...new Set(pairs.map((p) => p.mine))],
              theirs: room[b]!.filter((t) => pairs.some((p) => p.theirs === t)),
            });
        }
      const key = (x: any) => `${x.a} ${x.b}`;
      const sorted = (xs: any[]) => [...xs].sort((p, q) => key(p).localeCompare(key(q)));
      expect(sorted(scopesOverlapping(room)), JSON.stringify(room)).toEqual(sorted(pairwise));
    }
  });
  it("all pairs of a room at once (the Control Room's page)", () => {
    expect(scopesOverlapping([["src/a/**"], ["src/b"], ["src/a/x.ts", "lib"], ["lib/**/*.md"]])).toEqual([
      { a: 0, b: 2, mine: ["src/a/**"], theirs: ["src/a/x.ts"] },
      { a: 2, b: 3, mine: ["lib"], theirs: ["lib/**/*.md"] },
    ]);
  });
});

describe("arbitrate and the queue against a costly room share one budget", () => {
  const peer = (intentId: string, paths: string[]) => ({
    intentId,
    person: "bob",
    client: null,
    model: null,
    objective: "o",
    paths,
  });
  // Peers' claims that cost what they may, disjoint from each other and from the request.
  const costly = (tag: string) => ["*a".repeat(20) + `/${tag}/` + "*a".repeat(14)]; // ~110 states, under pathCost
  const room = Array.from({ length: 200 }, (_, i) => peer(`wki_${i}`, costly(`p${i}`)));
  it("the claims are within the bounds (matched as written)", () => {
    for (const p of room) expect(overBound(p.paths[0]!)).toBeNull();
  });
  it("past the budget every remaining peer counts as overlapping, and the budget says so", () => {
    const budget = { steps: 20_000 };
    const conflicts = arbitrate(costly("mine"), room, { budget });
    expect(budget.steps).toBeLessThanOrEqual(0);
    expect(conflicts.length).toBeGreaterThan(150); // the peers compared before it ran out do not overlap
    expect(conflicts.length).toBeLessThan(200);
  });
  it("within the budget, the same room is no conflict", () => {
    const budget = { steps: 1e9 };
    expect(arbitrate(costly("mine"), room, { budget })).toEqual([]);
    expect(budget.steps).toBeGreaterThan(0);
  });
  it("a waiter behind a room the budget cannot decide waits (it is not granted)", () => {
    const waiter = { id: "qw_1", intentId: "wki_me", paths: costly("mine"), createdAt: new Date(0) };
    expect(grantOrder(room, [waiter], { budget: { steps: 20_000 } }).granted).toEqual([]);
    expect(grantOrder(room, [waiter], { budget: { steps: 1e9 } }).granted).toEqual([waiter]);
  });
});
