import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Snapshot } from "../../adapter/src/guard/guard.js";
import { decide, factsShown, RULES, type Facts, type RuleName } from "../../adapter/src/guard/rules.js";

/**
 * The guard's one decision (adapter/src/guard/rules.ts), pure: a table per
 * rule (when it fires, when it does not), the precedence of every pair of
 * rules that can both fire, the stages of facts it asks for (what a call
 * refused early does not cost), and the rule list as docs/how-it-decides.md
 * gives it.
 */

/** The precedence as this test states it: the first rule that fires decides. */
const ORDER: RuleName[] = [
  "unknown-tool",
  "guard-files",
  "exempt",
  "caught-write",
  "not-guarded",
  "stopped",
  "unreachable",
  "unconfigured",
  "intent-not-ready",
  "scope-conflict",
  "outside-scope",
  "peers-unknown",
  "peer-holds",
  "uncertain-write-held",
  "git-refused",
  "stale-write",
  "allow",
];

const clear = (): Snapshot => ({
  control: "active",
  controlReason: null,
  contactError: null,
  configError: null,
  intentId: "wki_1",
  missedPublish: false,
  action: "proceed",
  scope: ["src/a"],
  explicitScope: true,
  targets: ["src/a/x.ts"],
  targetError: null,
  claimError: null,
  shellWrite: false,
});

/** Every stage read: an edit inside the declared scope, nobody else about. Allowed. */
const base = (): Facts => ({
  tool: "Write",
  label: "Claude Code",
  unknownTool: null,
  call: { kind: "edit", targets: ["src/a/x.ts"], command: null },
  guardWrites: [],
  exempt: false,
  notExempt: null,
  caught: null,
  service: { kind: "edit", snap: clear(), claimed: false, hold: null, bound: true },
  peers: [],
  git: { allowed: true },
  stale: [],
});

const peer = (paths: string[], intentId = "wki_ana") => ({
  intentId,
  person: "ana",
  client: "Codex",
  model: null,
  objective: "Refactor the parser",
  paths,
});
const addPeer = (f: Facts, paths: string[], intentId?: string) => {
  f.peers = [...(Array.isArray(f.peers) ? f.peers : []), peer(paths, intentId)];
};
const asShell = (f: Facts, command: string) => {
  f.tool = "Bash";
  f.call = { kind: "shell", targets: null, command: f.call?.command ?? command };
};
const snap = (f: Facts) => f.service!.snap;

/** What makes each rule fire, over any facts. */
const MAKES: Record<RuleName, (f: Facts) => void> = {
  "unknown-tool": (f) => {
    f.unknownTool = "frobnicate";
  },
  "guard-files": (f) => {
    f.guardWrites = [{ path: ".claude/settings.json", kind: "whole" }];
  },
  exempt: (f) => {
    f.exempt = true;
  },
  "caught-write": (f) => {
    f.caught = "this shell command changed src/p.ts (modified), which it had not claimed.";
  },
  "not-guarded": (f) => {
    f.tool = "Read";
    f.call = { kind: null, targets: null, command: null };
  },
  stopped: (f) => {
    snap(f).control = "paused";
  },
  unreachable: (f) => {
    snap(f).contactError = { code: "CONTROL_PLANE_UNREACHABLE", message: "cannot be reached" };
  },
  unconfigured: (f) => {
    snap(f).configError = "no credential";
  },
  "intent-not-ready": (f) => {
    snap(f).intentId = null;
  },
  "scope-conflict": (f) => {
    f.service!.claimed = true;
    snap(f).claimError = { code: "SCOPE_CONFLICT", message: "overlap", details: { conflicts: [] } };
  },
  "outside-scope": (f) => {
    snap(f).targets = [...(snap(f).targets ?? []), "docs/b.md"];
  },
  "peers-unknown": (f) => {
    f.peers = { error: "ECONNREFUSED" };
  },
  "peer-holds": (f) => addPeer(f, ["src/a/x.ts"], "wki_holder"),
  "uncertain-write-held": (f) => {
    asShell(f, "python -c 'open(p, \"w\")'");
    f.service!.hold = { named: [], uncertain: ["src/p.ts"], whole: false, targetError: null } as never;
    addPeer(f, ["src/p.ts"], "wki_p");
  },
  "git-refused": (f) => {
    asShell(f, "git stash");
    f.git = {
      allowed: false,
      reason: "git stash would take ana's changes to src/q.ts.",
      paths: ["src/q.ts"],
    };
  },
  "stale-write": (f) => {
    f.stale = [
      {
        path: "src/a/x.ts",
        by: { sessionId: "s2", intentId: null, person: null, objective: null },
        at: 1,
        lines: [],
      },
    ];
  },
  allow: () => {},
};

const make = (...names: RuleName[]) => {
  const f = base();
  for (const n of names) MAKES[n](f);
  return f;
};
const winner = (f: Facts) => {
  const d = decide(f);
  if ("need" in d) throw new Error(`asked for ${d.need}`);
  return d;
};
const fires = (name: RuleName, f: Facts) => RULES.find((r) => r.name === name)!.fires(f) !== null;

describe("the rule list", () => {
  it("is the order this test states, each name once, ending with allow", () => {
    expect(RULES.map((r) => r.name)).toEqual(ORDER);
  });
  it("the spec's table is one block of it, in the spec's order", () => {
    const at = ORDER.indexOf("stopped");
    expect(RULES.slice(at, at + 6).map((r) => r.code)).toEqual([
      "stopped",
      "unreachable",
      "unconfigured",
      "intentNotReady",
      "scopeConflict",
      "outsideScope",
    ]);
  });
  it("each condition has one meaning: the rules outside the table have codes of their own", () => {
    const code = (n: RuleName) => RULES.find((r) => r.name === n)!.code;
    expect(code("caught-write")).toBe("caughtWrite");
    expect(code("git-refused")).toBe("gitRefused");
    expect(code("peers-unknown")).toBe("peersUnknown");
    expect(code("stale-write")).toBe("staleWrite");
    // Two rules share the table's scopeConflict: both are a peer's claim in the write's way.
    expect(RULES.filter((r) => r.code === "scopeConflict").map((r) => r.name)).toEqual([
      "scope-conflict",
      "peer-holds",
      "uncertain-write-held",
    ]);
  });
  it("every refusing rule says what to do and which facts it read", () => {
    for (const r of RULES.filter((r) => r.code !== null)) {
      expect(r.todo, r.name).not.toBe("");
      expect(r.uses.length, r.name).toBeGreaterThan(0);
    }
  });
});

/** Per rule: [case, what changes from base(), whether the rule fires]. */
const TABLES: Record<RuleName, [string, (f: Facts) => void, boolean][]> = {
  "unknown-tool": [
    ["a tool no table knows", MAKES["unknown-tool"], true],
    ["a known tool", () => {}, false],
  ],
  "guard-files": [
    ["a write of a guard file", MAKES["guard-files"], true],
    ["no guard file written", () => {}, false],
  ],
  exempt: [
    ["the adapter's own command", MAKES.exempt, true],
    ["any other call", () => {}, false],
  ],
  "caught-write": [
    ["a write caught after an earlier call", MAKES["caught-write"], true],
    ["nothing caught", () => {}, false],
  ],
  "not-guarded": [
    ["a read tool", MAKES["not-guarded"], true],
    ["an edit", () => {}, false],
    ["a shell call", (f) => asShell(f, "ls"), false],
  ],
  stopped: [
    ["paused", MAKES.stopped, true],
    ["cancelled, a shell call", (f) => (asShell(f, "ls"), (snap(f).control = "cancelled")), true],
    ["active", () => {}, false],
  ],
  unreachable: [
    ["unreachable", MAKES.unreachable, true],
    ["a 5xx", (f) => (snap(f).contactError = { code: "INTERNAL", message: "boom" }), true],
    [
      "a 4xx the service vouches for",
      (f) => (snap(f).contactError = { code: "INVALID_INPUT", message: "x" }),
      false,
    ],
  ],
  unconfigured: [
    ["no credential", MAKES.unconfigured, true],
    [
      "a credential refused",
      (f) => (snap(f).contactError = { code: "UNAUTHENTICATED", message: "no" }),
      true,
    ],
    ["configured", () => {}, false],
  ],
  "intent-not-ready": [
    ["no intent, an edit", MAKES["intent-not-ready"], true],
    ["an intent on wait", (f) => (snap(f).action = "wait"), true],
    [
      "no intent, a shell call writing nothing named",
      (f) => (asShell(f, "ls"), (f.service!.kind = "shell")),
      false,
    ],
    ["an intent on proceed", () => {}, false],
  ],
  "scope-conflict": [
    ["the claim refused", MAKES["scope-conflict"], true],
    [
      "a shell call writing nothing named",
      (f) => (MAKES["scope-conflict"](f), (f.service!.kind = "shell")),
      false,
    ],
    ["the claim granted", (f) => (f.service!.claimed = true), false],
  ],
  "outside-scope": [
    ["a target outside", MAKES["outside-scope"], true],
    ["a target that is not a repository path", (f) => (snap(f).targetError = "an absolute path"), true],
    ["inside the scope", () => {}, false],
  ],
  "peers-unknown": [
    ["an edit of the declared scope, peers unreadable", MAKES["peers-unknown"], true],
    ["a shell call, peers unreadable", (f) => (asShell(f, "ls"), MAKES["peers-unknown"](f)), true],
    ["peers read", () => {}, false],
  ],
  "peer-holds": [
    ["a peer's live claim covers a target the local scope calls ours", MAKES["peer-holds"], true],
    ["a peer holds another path", (f) => addPeer(f, ["src/zz.ts"]), false],
    [
      "the target was claimed on this call (the service checked it)",
      (f) => (MAKES["peer-holds"](f), (f.service!.claimed = true)),
      false,
    ],
  ],
  "uncertain-write-held": [
    ["a one-liner's path a peer holds", MAKES["uncertain-write-held"], true],
    [
      "the whole checkout while a peer holds anything",
      (f) => {
        asShell(f, "rm -rf .");
        f.service!.hold = { named: [], uncertain: [], whole: true, targetError: null } as never;
        addPeer(f, ["docs"]);
      },
      true,
    ],
    ["a one-liner's path nobody holds", (f) => (MAKES["uncertain-write-held"](f), (f.peers = [])), false],
  ],
  "git-refused": [
    ["a git command that takes a peer's changes", MAKES["git-refused"], true],
    ["a git command Git allows", (f) => asShell(f, "git status"), false],
  ],
  "stale-write": [
    ["a target changed since this session read it", MAKES["stale-write"], true],
    ["nothing stale", () => {}, false],
  ],
  allow: [["anything", () => {}, true]],
};

describe("a table per rule", () => {
  it("covers every rule", () => {
    expect(Object.keys(TABLES)).toEqual(ORDER);
  });
  for (const [name, rows] of Object.entries(TABLES) as [RuleName, (typeof TABLES)[RuleName]][])
    describe(name, () => {
      for (const [label, change, expected] of rows)
        it(`${label}: ${expected ? "fires" : "does not fire"}`, () => {
          const f = base();
          change(f);
          expect(fires(name, f)).toBe(expected);
          // Alone over base(), a rule that fires decides, with its code and its name in the verdict.
          if (expected) {
            const d = winner(f);
            expect(d.rule.name).toBe(name);
            const rule = RULES.find((r) => r.name === name)!;
            if (rule.code === null) expect(d.verdict.permission).toBe("allow");
            else expect(d.verdict).toMatchObject({ permission: "deny", condition: rule.code, rule: name });
          }
        });
    });
});

describe("precedence: of two rules that both fire, the earlier decides", () => {
  const pairs: [RuleName, RuleName][] = [];
  for (let i = 0; i < ORDER.length; i++)
    for (let j = i + 1; j < ORDER.length; j++) {
      const [a, b] = [ORDER[i]!, ORDER[j]!];
      // Both ways round: a fixture may undo the other's (a read tool is no shell call).
      const both = [make(a, b), make(b, a)].filter((f) => fires(a, f) && fires(b, f));
      if (both.length) pairs.push([a, b]);
    }
  it("most pairs can both fire", () => {
    // 17 rules, 136 pairs; those that cannot meet are a read tool with a shell or edit rule, the peers unreadable with a peer's claim.
    expect(pairs.length).toBeGreaterThanOrEqual(100);
    for (const must of [
      ["guard-files", "exempt"],
      ["exempt", "caught-write"],
      ["caught-write", "not-guarded"],
      ["outside-scope", "peer-holds"],
      ["scope-conflict", "stale-write"],
      ["peer-holds", "stale-write"],
      ["uncertain-write-held", "git-refused"],
      ["git-refused", "stale-write"],
    ])
      expect(pairs, must.join(" over ")).toContainEqual(must);
  });
  for (const [a, b] of pairs)
    it(`${a} over ${b}`, () => {
      for (const f of [make(a, b), make(b, a)]) {
        if (!fires(a, f) || !fires(b, f)) continue;
        // The earliest of every rule that fires on these facts: a or b, unless a third one that fires comes first.
        const first = ORDER.find((n) => fires(n, f))!;
        expect(ORDER.indexOf(first)).toBeLessThanOrEqual(ORDER.indexOf(a));
        expect(winner(f).rule.name).toBe(first);
      }
    });
});

describe("the facts it asks for, stage by stage", () => {
  const only = (f: Facts, upTo: keyof Facts | null): Facts => {
    const keep: (keyof Facts)[] = ["tool", "label", "unknownTool"];
    const stages: (keyof Facts)[][] = [
      ["call", "guardWrites", "exempt", "notExempt"],
      ["caught"],
      ["service"],
      ["peers"],
      ["git"],
      ["stale"],
    ];
    const out: Partial<Facts> = {};
    for (const k of keep) (out as Record<string, unknown>)[k] = f[k];
    if (upTo === null) return out as Facts;
    for (const group of stages) {
      for (const k of group) (out as Record<string, unknown>)[k] = f[k];
      if (group.includes(upTo)) break;
    }
    return out as Facts;
  };
  const need = (f: Facts) => {
    const d = decide(f);
    return "need" in d ? d.need : d.rule.name;
  };
  it("an unknown tool is refused before the call is read", () => {
    expect(need(only(make("unknown-tool"), null))).toBe("unknown-tool");
    expect(need(only(base(), null))).toBe("call");
  });
  it("a guard-file write and the adapter's own command are decided before the caught writes are read", () => {
    expect(need(only(make("guard-files", "caught-write"), "call"))).toBe("guard-files");
    expect(need(only(make("exempt"), "call"))).toBe("exempt");
    expect(need(only(base(), "call"))).toBe("caught");
  });
  it("a read tool is decided without the service", () => {
    expect(need(only(make("not-guarded"), "caught"))).toBe("not-guarded");
    expect(need(only(base(), "caught"))).toBe("service");
  });
  it("a refusal by the table reads the peers only to name a holder of a write's targets", () => {
    expect(need(only(make("stopped"), "service"))).toBe("stopped");
    expect(need(only(make("outside-scope"), "service"))).toBe("peers");
    expect(need(only(make("scope-conflict"), "service"))).toBe("scope-conflict");
  });
  it("an edit claimed on this call is not checked against the peers again, nor Git; only the stale check is read", () => {
    const f = only(base(), "service");
    f.service!.claimed = true;
    expect(need(f)).toBe("stale");
    f.stale = [];
    expect(need(f)).toBe("allow");
  });
  it("an edit of the declared scope reads the peers, then the stale check, never Git", () => {
    const f = only(base(), "service");
    expect(need(f)).toBe("peers");
    f.peers = [];
    expect(need(f)).toBe("stale");
  });
  it("a shell call reads Git after the peers, and a refusal by a peer's claim reads neither Git nor the stale check", () => {
    const f = only(make("uncertain-write-held"), "service");
    f.peers = undefined;
    expect(need(f)).toBe("peers");
    f.peers = make("uncertain-write-held").peers;
    expect(need(f)).toBe("uncertain-write-held");
    const g = only(base(), "service");
    asShell(g, "git stash");
    g.service!.kind = "shell";
    g.service!.snap.targets = null;
    g.peers = [];
    expect(need(g)).toBe("git");
  });
});

describe("what `why` shows of a refusal", () => {
  it("the facts the rule read, by name", () => {
    const f = make("outside-scope");
    const rule = RULES.find((r) => r.name === "outside-scope")!;
    expect(factsShown(rule, f)).toEqual({
      targets: "src/a/x.ts, docs/b.md",
      scope: "src/a (declared)",
      peers: "0 active",
    });
    expect(rule.todoOn!(f)).toBeNull();
    const held = make("outside-scope", "peer-holds");
    expect(factsShown(rule, held).peers).toBe("ana (wki_holder) holds src/a/x.ts");
    expect(rule.todoOn!(held)).toMatch(/^Work elsewhere, queue .* Then: Declare a scope/);
    const p = make("peer-holds");
    expect(
      factsShown(
        RULES.find((r) => r.name === "peer-holds")!,
        p,
      ).peers,
    ).toBe("ana (wki_holder) holds src/a/x.ts");
  });
});

describe("docs/how-it-decides.md", () => {
  it("lists the rules in the list's order", () => {
    const doc = readFileSync(fileURLToPath(new URL("../../docs/how-it-decides.md", import.meta.url)), "utf8");
    const start = doc.indexOf("<!-- rules:begin -->");
    const end = doc.indexOf("<!-- rules:end -->");
    expect(start).toBeGreaterThan(-1);
    const names = [...doc.slice(start, end).matchAll(/^\d+\. `([a-z-]+)`/gm)].map((m) => m[1]);
    expect(names).toEqual(RULES.map((r) => r.name));
  });
});
