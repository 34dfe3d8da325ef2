import { describe, expect, it } from "vitest";
import { scopeOverlap } from "@cohent/protocol";
import type { PeerClaim } from "../../backend/src/core/arbitrate.js";
import {
  grantedPaths,
  keepsPlace,
  keepsWait,
  grantOrder,
  queuePlace,
  samePaths,
  waitersOn,
  type QueuedClaim,
} from "../../backend/src/core/queue.js";

const claim = (intentId: string, ...paths: string[]): PeerClaim => ({
  intentId,
  person: intentId,
  client: null,
  model: null,
  objective: null,
  paths,
});
let n = 0;
/** Waiters queue in the order they are written here (one millisecond apart). */
const wait = (intentId: string, ...paths: string[]): QueuedClaim => ({
  id: `qw_${String(++n).padStart(4, "0")}`,
  intentId,
  paths,
  createdAt: new Date(1_700_000_000_000 + n),
});

type Case = {
  name: string;
  claims: PeerClaim[];
  queue: QueuedClaim[];
  granted: string[];
  waiting: string[];
  caseInsensitive?: boolean;
};

const cases: Case[] = [
  {
    name: "the path is free: the first waiter is granted",
    claims: [],
    queue: [wait("b", "app/auth")],
    granted: ["b"],
    waiting: [],
  },
  {
    name: "the holder still holds it: nobody is granted",
    claims: [claim("a", "app/auth")],
    queue: [wait("b", "app/auth")],
    granted: [],
    waiting: ["b"],
  },
  {
    name: "grant order: two waiters on one path, the first is granted and the second waits behind its grant",
    claims: [],
    queue: [wait("b", "app/auth"), wait("c", "app/auth")],
    granted: ["b"],
    waiting: ["c"],
  },
  {
    name: "partial overlap: a waiter needing a held path and a free one waits for all of them",
    claims: [claim("a", "app/auth/login.ts")],
    queue: [wait("b", "app/auth/login.ts", "app/db")],
    granted: [],
    waiting: ["b"],
  },
  {
    name: "partial overlap: the holder narrowed away from the waiter's paths",
    claims: [claim("a", "app/ui")],
    queue: [wait("b", "app/auth/**", "app/db")],
    granted: ["b"],
    waiting: [],
  },
  {
    name: "a glob holder blocks a file inside it",
    claims: [claim("a", "src/**/*.ts")],
    queue: [wait("b", "src/x/y.ts")],
    granted: [],
    waiting: ["b"],
  },
  {
    name: "no overtaking: a later waiter overlapping an earlier one still waiting stays behind it",
    claims: [claim("a", "app/auth")],
    queue: [wait("b", "app/auth", "app/db"), wait("c", "app/db")],
    granted: [],
    waiting: ["b", "c"],
  },
  {
    name: "a later waiter on disjoint paths is granted past an earlier one still waiting",
    claims: [claim("a", "app/auth")],
    queue: [wait("b", "app/auth"), wait("c", "docs")],
    granted: ["c"],
    waiting: ["b"],
  },
  {
    name: "a waiter that left the queue (absent): the next one moves up and is granted",
    claims: [],
    queue: [wait("c", "app/auth")],
    granted: ["c"],
    waiting: [],
  },
  {
    name: "expiry of the holder (its claim removed before the walk): the waiter is granted",
    claims: [claim("other", "lib")],
    queue: [wait("b", "app/auth")],
    granted: ["b"],
    waiting: [],
  },
  {
    name: "two queues on one path: a directory waiter and a file waiter, first come first served",
    claims: [],
    queue: [wait("b", "app"), wait("c", "app/x.ts"), wait("d", "app/y.ts")],
    granted: ["b"],
    waiting: ["c", "d"],
  },
  {
    name: "two queues on two paths, both free: both first waiters granted, their seconds wait",
    claims: [],
    queue: [wait("b", "app"), wait("c", "lib"), wait("d", "app/x.ts"), wait("e", "lib/y.ts")],
    granted: ["b", "c"],
    waiting: ["d", "e"],
  },
  {
    name: "a waiter's own previous claim never blocks it; its grant replaces it",
    claims: [claim("b", "app/auth/old.ts")],
    queue: [wait("b", "app/auth")],
    granted: ["b"],
    waiting: [],
  },
  {
    name: "a granted waiter's new claim blocks a later waiter on the same paths in the same walk",
    claims: [claim("b", "docs")],
    queue: [wait("b", "app"), wait("c", "app/x.ts")],
    granted: ["b"],
    waiting: ["c"],
  },
  {
    name: "a waiter whose old claim blocked an earlier waiter: the earlier one still waits (no re-walk)",
    claims: [claim("c", "app/x.ts")],
    queue: [wait("b", "app/x.ts"), wait("c", "lib")],
    granted: ["c"],
    waiting: ["b"],
  },
  {
    name: "case-insensitive repository: App/Auth and app/auth are one path",
    claims: [claim("a", "App/Auth")],
    queue: [wait("b", "app/auth")],
    granted: [],
    waiting: ["b"],
    caseInsensitive: true,
  },
];

describe("the claim queue's grant order (core/queue)", () => {
  it.each(cases)("$name", (c) => {
    const { granted, waiting } = grantOrder(c.claims, c.queue, { caseInsensitive: !!c.caseInsensitive });
    expect(granted.map((w) => w.intentId)).toEqual(c.granted);
    expect(waiting.map((w) => w.intentId)).toEqual(c.waiting);
  });

  it("queue order is (createdAt, id), whatever order the rows come in", () => {
    const at = new Date(1_800_000_000_000);
    const x = { id: "qw_b", intentId: "x", paths: ["p"], createdAt: at };
    const y = { id: "qw_a", intentId: "y", paths: ["p"], createdAt: at };
    const z = { id: "qw_0", intentId: "z", paths: ["p"], createdAt: new Date(at.getTime() + 1) };
    expect(grantOrder([], [z, x, y]).granted.map((w) => w.intentId)).toEqual(["y"]);
    expect(grantOrder([], [z, x, y]).waiting.map((w) => w.intentId)).toEqual(["x", "z"]);
  });

  it("never grants two overlapping waiters in one walk, over random queues", () => {
    const shapes = ["a", "a/x.ts", "a/**/*.ts", "b", "b/y", "a/x.ts", "c"];
    for (let round = 0; round < 300; round++) {
      const queue = Array.from({ length: 6 }, (_, i) =>
        wait(`w${i}`, shapes[(round * 7 + i * 3) % shapes.length]!),
      );
      const { granted } = grantOrder([], queue);
      for (let i = 0; i < granted.length; i++)
        for (let j = i + 1; j < granted.length; j++)
          expect(scopeOverlap(granted[i]!.paths, granted[j]!.paths), `round ${round}`).toEqual([]);
    }
  });

  it("place: the holders it waits behind and the earlier overlapping waiters ahead", () => {
    const holders = [claim("a", "app/auth"), claim("z", "docs")];
    const b = wait("b", "app/auth");
    const c = wait("c", "app");
    const d = wait("d", "lib");
    const queue = [b, c, d];
    expect(queuePlace(b, holders, queue)).toMatchObject({
      place: 1,
      holders: [{ intentId: "a" }],
      ahead: [],
    });
    const cPlace = queuePlace(c, holders, queue);
    expect(cPlace.place).toBe(2);
    expect(cPlace.ahead.map((w) => w.intentId)).toEqual(["b"]);
    expect(queuePlace(d, holders, queue)).toMatchObject({ place: 1, holders: [] });
    expect(waitersOn(["app/auth/x.ts"], queue).map((w) => w.intentId)).toEqual(["b", "c"]);
  });

  it("same paths in another order keep the place; other paths do not", () => {
    expect(samePaths(["b", "a"], ["a", "b"])).toBe(true);
    expect(samePaths(["a"], ["a", "b"])).toBe(false);
  });
});

describe("a waiter's own claims while it waits", () => {
  const keeps: [
    previous: string[] | null,
    paths: string[],
    waiting: string[],
    keeps: boolean,
    why: string,
  ][] = [
    [null, ["lib/x.ts"], ["app/auth"], true, "first work elsewhere"],
    [["lib/x.ts"], ["lib/x.ts", "lib/y.ts"], ["app/auth"], true, "more work elsewhere (the hook's claim)"],
    [["lib/x.ts"], ["lib/y.ts"], ["app/auth"], false, "drops what it held: another plan"],
    [null, ["app/auth/a.ts"], ["app/auth"], false, "names a waited path"],
    [null, ["app"], ["app/auth/a.ts"], false, "covers a waited path"],
    [["lib/x.ts"], [], ["app/auth"], false, "a release"],
    [null, ["APP/Auth"], ["app/auth"], true, "case-sensitive repository: another path"],
  ];
  for (const [previous, paths, waiting, expected, why] of keeps)
    it(`keepsWait: ${why}`, () => expect(keepsWait(previous, paths, waiting)).toBe(expected));
  it("keepsWait on a case-insensitive repository", () =>
    expect(keepsWait(null, ["APP/Auth"], ["app/auth"], { caseInsensitive: true })).toBe(false));

  const places: [waited: string[], contested: string[], keeps: boolean][] = [
    [["app/auth"], ["app/auth"], true],
    [["app/auth", "lib/x.ts"], ["app/auth"], true],
    [["app/auth"], ["app/auth", "app/billing"], false],
    [["app/auth"], [], true],
  ];
  for (const [waited, contested, expected] of places)
    it(`keepsPlace: waited ${waited.join(",")}, refused on ${contested.join(",") || "nothing"}`, () =>
      expect(keepsPlace(waited, contested)).toBe(expected));

  it("grantedPaths: the waited paths first, then what is held, once each", () => {
    expect(grantedPaths(["app/auth"], ["lib/x.ts", "app/auth"])).toEqual(["app/auth", "lib/x.ts"]);
    expect(grantedPaths(["app/auth"], null)).toEqual(["app/auth"]);
  });
});
