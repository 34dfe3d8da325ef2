import { describe, expect, it } from "vitest";
import { onStop, stopCheckpoint } from "../../adapter/src/guard/guard.js";
import {
  agentIdOf,
  atSessionEnd,
  atStop,
  backgroundTaskOf,
  held,
  isSpawn,
  isTaskNotification,
  liveOf,
  seen,
  shellStarted,
  spawned,
  stopped,
  turnStarted,
  type Live,
  type Subagents,
} from "../../adapter/src/guard/subagents.js";

/**
 * Sub-agent tracking and the Stop, pure: the hook's transitions (hook.ts,
 * hook-stop.ts) applied to event sequences, first those measured on the real
 * clients (test/clients scenarios subagent-background and subagent-late,
 * hook payloads logged), then the rules one by one.
 *
 * Events: `spawn` (the main agent's Agent call), `call a` (a tool call of
 * sub-agent a), `shell a s1` (a's PostToolUse names background task s1),
 * `Stop`, `Stop@a` (a Stop carrying agent_id a), `SubagentStop a`,
 * `notify` (a `<task-notification>` UserPromptSubmit), `prompt` (a person's
 * next prompt), `SessionEnd`. A Stop or SubagentStop may carry the
 * payload's `background_tasks` as `[a,shell:s1]`: live sub-agents by id,
 * live background commands as `shell:<id>`; `[]` is an empty list, none at
 * all a payload without one.
 */
type Session = { intentId: string; action: string; touched: string[] };

function liveList(spec: string | undefined): Live | null {
  if (spec === undefined) return null;
  const items = spec.slice(1, -1).split(",").filter(Boolean);
  return liveOf(
    items.map((i) =>
      i.startsWith("shell:")
        ? { id: i.slice(6), type: "shell", status: "running" }
        : { id: i, type: "subagent", status: "running" },
    ),
  );
}

function run(events: string[], first: Session = { intentId: "wki_1", action: "proceed", touched: [] }) {
  let session = { ...first };
  let t: Subagents | undefined;
  const out: string[] = [];
  const finish = () => {
    const d = stopCheckpoint(session);
    out.push(d?.status ?? "nothing");
    if (d) session = { ...session, action: d.status };
  };
  for (const e of events) {
    const [head, ...rest] = e.split(" ");
    const list = rest.find((r) => r.startsWith("["));
    const args = rest.filter((r) => !r.startsWith("["));
    const [name, stopAgent = null] = head!.split("@") as [string, string?];
    const id = args[0] ?? null;
    if (name === "spawn") t = spawned(t);
    else if (name === "call") t = seen(t, id!) ?? t;
    else if (name === "shell") t = shellStarted(t, id!, args[1]!) ?? t;
    else if (name === "Stop") {
      const live = liveList(list);
      if (!stopAgent && live && t) t = atStop(t, live);
      const d = onStop({ ...session, subagents: t }, stopAgent);
      if (d === "hold") {
        t = held(t!);
        out.push("hold");
      } else {
        out.push(d?.status ?? "nothing");
        if (d) session = { ...session, action: d.status };
      }
    } else if (name === "SubagentStop") {
      if (!t) continue;
      const r = stopped(t, id, liveList(list));
      t = r.next;
      if (r.release) finish();
    } else if (name === "notify") {
      const n = turnStarted(t);
      if (n !== null) t = n;
    } else if (name === "prompt") {
      t = undefined;
      session = { intentId: "wki_2", action: "proceed", touched: [] };
    } else if (name === "SessionEnd") {
      const end = atSessionEnd(t);
      if (end === "complete") finish();
      if (end !== "keep") t = undefined;
      out.push(end);
    } else throw new Error(`unknown event ${e}`);
  }
  return { out, t };
}

describe("sub-agents and the Stop: the sequences measured on Claude Code 2.1.197 and 2.1.332", () => {
  it.each<[string, string[], string[]]>([
    [
      "both: a background sub-agent whose calls come 5-30 s after the parent's Stop; done at its SubagentStop, then the notification turn",
      [
        "spawn",
        "Stop [a]",
        "call a",
        "call a",
        "call a",
        "SubagentStop a [a]",
        "notify",
        "Stop []",
        "SessionEnd",
      ],
      ["hold", "completed", "nothing", "end"],
    ],
    [
      "both: its first call (a Bash sleep) races the parent's Stop",
      [
        "spawn",
        "call a",
        "Stop [a]",
        "call a",
        "call a",
        "SubagentStop a [a]",
        "notify",
        "Stop []",
        "SessionEnd",
      ],
      ["hold", "completed", "nothing", "end"],
    ],
    [
      "2.1.332 (subagent-late): it ends its turn while its own background command runs, is woken when it ends (SubagentStart again), and works on; m1 is the parent's own command",
      [
        "spawn",
        "Stop [shell:m1,a]",
        "call a",
        "call a",
        "call a",
        "shell a s1",
        "SubagentStop a [shell:m1,a,shell:s1]",
        "notify",
        "Stop [shell:m1,shell:s1]",
        "call a",
        "call a",
        "call a",
        "SubagentStop a [shell:m1,a]",
        "notify",
        "Stop [shell:m1]",
        "notify",
        "Stop []",
        "SessionEnd",
      ],
      ["hold", "hold", "completed", "nothing", "nothing", "end"],
    ],
    [
      "2.1.197 (subagent-late): the same sub-agent is not woken; `-p` ends once its command has, and the held Stop runs at SessionEnd",
      [
        "spawn",
        "Stop [a]",
        "call a",
        "call a",
        "call a",
        "shell a s1",
        "SubagentStop a [a,shell:s1]",
        "notify",
        "Stop [shell:s1]",
        "SessionEnd",
      ],
      ["hold", "hold", "completed", "complete"],
    ],
  ])("%s", (_name, events, decisions) => {
    const r = run(events);
    expect(r.out).toEqual(decisions);
    expect(r.t).toBeUndefined();
  });
});

describe("sub-agents and the Stop: the rules", () => {
  it.each<[string, string[], string[], Subagents | undefined]>([
    ["no sub-agent: the Stop completes", ["Stop"], ["completed"], undefined],
    [
      "a foreground sub-agent ends before the Stop",
      ["spawn", "call a", "SubagentStop a", "Stop"],
      ["completed"],
      undefined,
    ],
    [
      "a background sub-agent: the Stop is held, its SubagentStop runs it",
      ["spawn", "call a", "Stop", "SubagentStop a"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "held before its first call (spawn pending, no list)",
      ["spawn", "Stop", "call a", "SubagentStop a"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "two sub-agents: only the last one releases",
      ["spawn", "spawn", "call a", "call b", "Stop", "SubagentStop a"],
      ["hold"],
      { ids: ["b"], pending: 0, stopHeld: true },
    ],
    [
      "an unknown agent's SubagentStop does not release a Stop held for another",
      ["spawn", "call a", "Stop", "SubagentStop x"],
      ["hold"],
      { ids: ["a"], pending: 0, stopHeld: true },
    ],
    [
      "nor one that comes before the sub-agent's first call",
      ["spawn", "Stop", "SubagentStop x", "call a", "call a", "SubagentStop a"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "nor one with a list: the list adds, never takes away",
      ["spawn", "call a", "Stop [a]", "SubagentStop x [x]"],
      ["hold"],
      { ids: ["a"], pending: 0, stopHeld: true },
    ],
    [
      "a SubagentStop without an id changes nothing",
      ["spawn", "call a", "Stop", "SubagentStop"],
      ["hold"],
      { ids: ["a"], pending: 0, stopHeld: true },
    ],
    [
      "a stopping sub-agent's list misses the other one: it still runs",
      ["spawn", "spawn", "call a", "call b", "Stop", "SubagentStop a [a]"],
      ["hold"],
      { ids: ["b"], pending: 0, stopHeld: true },
    ],
    [
      "a sub-agent the Stop lists before its first call: held until its SubagentStop",
      ["spawn", "Stop [a]", "SubagentStop a [a]"],
      ["hold", "completed"],
      undefined,
    ],
    ["the Stop's list settles a spawn that never started", ["spawn", "Stop []"], ["completed"], undefined],
    [
      "the Stop's list drops a sub-agent that ended unseen by the hook",
      ["spawn", "call a", "Stop []"],
      ["completed"],
      undefined,
    ],
    [
      "two background sub-agents: the first one's notification turn leaves the other's hold in place",
      [
        "spawn",
        "spawn",
        "call a",
        "call b",
        "Stop [a,b]",
        "SubagentStop a [a,b]",
        "notify",
        "Stop [b]",
        "call b",
        "SubagentStop b [b]",
      ],
      ["hold", "hold", "completed"],
      undefined,
    ],
    [
      "a notification turn's own Stop decides again (here: the other sub-agent is gone)",
      ["spawn", "call a", "call b", "Stop [a,b]", "SubagentStop a [a,b]", "notify", "Stop []"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "the main agent's own background command does not hold its Stop",
      ["Stop [shell:m1]"],
      ["completed"],
      undefined,
    ],
    [
      "a parked sub-agent whose command has ended by the next Stop: done",
      [
        "spawn",
        "call a",
        "shell a s1",
        "Stop [a,shell:s1]",
        "SubagentStop a [a,shell:s1]",
        "notify",
        "Stop []",
      ],
      ["hold", "completed"],
      undefined,
    ],
    [
      "parked while its command runs",
      ["spawn", "call a", "shell a s1", "Stop [a,shell:s1]", "SubagentStop a [a,shell:s1]"],
      ["hold"],
      { ids: [], pending: 0, shells: { a: ["s1"] }, parked: ["a"], stopHeld: true },
    ],
    [
      "a woken sub-agent runs again",
      ["spawn", "call a", "shell a s1", "Stop [a,shell:s1]", "SubagentStop a [a,shell:s1]", "call a"],
      ["hold"],
      { ids: ["a"], pending: 0, shells: { a: ["s1"] }, stopHeld: true },
    ],
    [
      "without a list a stopping sub-agent does not park",
      ["spawn", "call a", "shell a s1", "Stop", "SubagentStop a"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "the next prompt supersedes the tracking",
      ["spawn", "call a", "Stop", "prompt", "Stop"],
      ["hold", "completed"],
      undefined,
    ],
    [
      "a sub-agent's own Stop is not held",
      ["spawn", "call a", "Stop@a"],
      ["completed"],
      { ids: ["a"], pending: 0 },
    ],
    [
      "SessionEnd while a seen sub-agent has not stopped keeps everything; its SubagentStop completes",
      ["spawn", "call a", "Stop", "SessionEnd", "SubagentStop a"],
      ["hold", "keep", "completed"],
      undefined,
    ],
    [
      "SessionEnd with a spawn that never ran: the held Stop runs",
      ["spawn", "Stop", "SessionEnd"],
      ["hold", "completed", "complete"],
      undefined,
    ],
    ["a SubagentStop with nothing tracked changes nothing", ["SubagentStop x"], [], undefined],
    [
      "calls of a known sub-agent change nothing",
      ["spawn", "call a", "call a"],
      [],
      { ids: ["a"], pending: 0 },
    ],
  ])("%s", (_name, events, decisions, tracking) => {
    const r = run(events);
    expect(r.out).toEqual(decisions);
    expect(r.t).toEqual(tracking);
  });

  it("a held Stop after wait ends blocked, never completed", () => {
    expect(
      run(["spawn", "call a", "Stop", "SubagentStop a"], { intentId: "wki_1", action: "wait", touched: [] })
        .out,
    ).toEqual(["hold", "blocked"]);
  });

  it("a transition that changes nothing says so (null), so the hook writes nothing", () => {
    const t: Subagents = { ids: ["a"], pending: 0, shells: { a: ["s1"] } };
    expect(seen(t, "a")).toBeNull();
    expect(shellStarted(t, "a", "s1")).toBeNull();
    expect(turnStarted(t)).toBeNull();
    expect(stopped(t, "x").next).toBe(t);
  });
});

describe("what the hook reads off the payloads (as measured)", () => {
  it("background_tasks: live sub-agents and shells; other kinds and ended tasks are not the session's to wait for", () => {
    // A SubagentStop of 2.1.332 (subagent-late), verbatim but for the ids.
    const tasks = [
      {
        id: "a11af1961474b3b94",
        type: "subagent",
        status: "running",
        description: "Write the feature module",
        agent_type: "general-purpose",
      },
      { id: "bv2ytt223", type: "shell", status: "running", description: "wait", command: "sleep 5" },
    ];
    expect(liveOf(tasks)).toEqual({ agents: ["a11af1961474b3b94"], shells: ["bv2ytt223"] });
    expect(
      liveOf([
        { id: "d1", type: "dream", status: "running" },
        { id: "m1", type: "monitor", status: "running" },
        { id: "s2", type: "shell", status: "completed" },
        { id: "a2", type: "subagent", status: "pending" },
        { type: "subagent", status: "running" },
        null,
      ]),
    ).toEqual({ agents: ["a2"], shells: [] });
    expect(liveOf([])).toEqual({ agents: [], shells: [] });
    expect(liveOf(undefined)).toBeNull();
    expect(liveOf("x")).toBeNull();
  });
  it("a task notification is Claude Code's, a person's prompt is not", () => {
    expect(isTaskNotification("<task-notification>\n<task-id>a11af1961474b3b94</task-id>\n")).toBe(true);
    expect(isTaskNotification("  <task-notification>")).toBe(true);
    expect(isTaskNotification("Add a feature module to the demo app")).toBe(false);
    expect(isTaskNotification("see <task-notification> below")).toBe(false);
    expect(isTaskNotification(undefined)).toBe(false);
  });
  it("the background command a call started", () => {
    expect(
      backgroundTaskOf({
        stdout: "",
        stderr: "",
        interrupted: false,
        isImage: false,
        noOutputExpected: false,
        backgroundTaskId: "bv2ytt223",
      }),
    ).toBe("bv2ytt223");
    expect(backgroundTaskOf({ stdout: "x" })).toBeNull();
    expect(backgroundTaskOf(null)).toBeNull();
    expect(backgroundTaskOf("bv2ytt223")).toBeNull();
  });
  it("only the main agent spawns, through Agent or Task; an id comes from agent_id alone", () => {
    expect([
      isSpawn("Agent", null),
      isSpawn("Task", null),
      isSpawn("Agent", "a"),
      isSpawn("Bash", null),
    ]).toEqual([true, true, false, false]);
    expect([
      agentIdOf({ agent_id: "a1" }),
      agentIdOf({ agent_id: "" }),
      agentIdOf({ agent_id: 3 }),
      agentIdOf({}),
    ]).toEqual(["a1", null, null, null]);
  });
});
