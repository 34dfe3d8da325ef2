import { describe, expect, it } from "vitest";
import { simpleCommands } from "../../adapter/src/shell/reader.js";
import {
  MAX_COMMAND,
  MAX_GUESSES,
  shellWrites,
  type ShellTarget,
  type ShellWrites,
} from "../../adapter/src/shell/writes.js";
import {
  AGENT_ROWS,
  BUG_REPORT,
  FORM_ROWS,
  READ_ONLY,
  ROOT,
  STYLED_ROWS,
  type Row,
} from "./shell-writes-table.js";

/**
 * The one reader of what a shell command writes (shell/writes.ts), read by
 * the guard-files rule and by the rule that holds shell writes to peers'
 * claims. Rows in shell-writes-table.ts.
 */

const token = (t: ShellTarget) => `${t.certainty[0]}${t.mode[0]}:${t.rel ?? t.abs ?? `~${t.text}`}`;
function render(w: ShellWrites): string[] {
  const flags = [w.readOnly && "ro", w.unread && "unread", w.init && "init"].filter((f): f is string => !!f);
  return [...new Set([...w.targets.map(token), ...flags])].sort();
}
const expected = (s: string) => [...new Set(s.split(" ").filter(Boolean))].sort();
const read = (command: string, cwd = ROOT) => shellWrites(command, cwd, ROOT);

/** Does a target reach the peer's claims (src/peer.ts, src/held/)? */
const PEER = ["src/peer.ts", "src/held"];
const overlaps = (t: ShellTarget) =>
  t.rel !== null &&
  (t.rel === "" || PEER.some((p) => t.rel === p || t.rel!.startsWith(p + "/") || p.startsWith(t.rel + "/")));

function table(name: string, rows: Row[]) {
  describe(name, () => {
    for (const [command, want, cwd] of rows)
      it(JSON.stringify(command).slice(0, 120), () => {
        expect(render(read(command, cwd))).toEqual(expected(want));
      });
  });
}

table("the bug report's commands", BUG_REPORT);
table("commands real agents run", AGENT_ROWS);
table("commands in the manner of those sources", STYLED_ROWS);
table("every form the reader covers", FORM_ROWS);

describe("the tables", () => {
  it("are large enough: agents' commands, half of them verbatim from a source; the forms; the reads", () => {
    const commands = BUG_REPORT.length + AGENT_ROWS.length + STYLED_ROWS.length;
    expect(commands).toBeGreaterThanOrEqual(200);
    expect(AGENT_ROWS.length).toBeGreaterThanOrEqual(commands / 2);
    expect(FORM_ROWS.length).toBeGreaterThanOrEqual(100);
    expect(READ_ONLY.length).toBeGreaterThanOrEqual(100);
    const all = [...BUG_REPORT, ...AGENT_ROWS, ...STYLED_ROWS, ...FORM_ROWS].map(([c]) => c);
    expect(all.filter((c, i) => all.indexOf(c) !== i)).toEqual([]);
  });

  it("each bug-report command writes the peer's claim", () => {
    for (const [command] of BUG_REPORT) expect(read(command).targets.some(overlaps), command).toBe(true);
  });
});

describe("read-only commands naming the peer's paths", () => {
  for (const command of READ_ONLY)
    it(command, () => {
      const w = read(command);
      expect(w.targets.filter(overlaps)).toEqual([]);
      expect(w.readOnly).toBe(true);
      expect(w.unread).toBe(false);
    });
});

describe("targets", () => {
  it("carry the word, its directory and paths", () => {
    const [t] = read("cd src && rm ../src/held/./x.ts").targets;
    expect(t).toEqual({
      text: "../src/held/./x.ts",
      abs: "/repo/src/held/x.ts",
      rel: "src/held/x.ts",
      certainty: "named",
      mode: "remove",
      dynamic: false,
      cwd: "/repo/src",
    });
  });

  it("a run-time word has no path and is uncertain, even as a redirect", () => {
    const [t] = read('echo x > "$ROOT/src/peer.ts"').targets;
    expect(t).toMatchObject({ abs: null, rel: null, certainty: "uncertain", dynamic: true });
    expect(t!.text).toBe("/src/peer.ts");
  });

  it("outside the checkout: an absolute path and no rel", () => {
    expect(read("cp a.ts /tmp/").targets[0]).toMatchObject({ abs: "/tmp/a.ts", rel: null });
  });
});

describe("hostile commands: bounded time, and what cannot be read comes back uncertain", () => {
  // A promised deadline: the hook answers a hostile command within its own 25 s (DEADLINE_MS), and
  // the reader is the part of that answer a command's size decides. Measured here: at most 191 ms
  // (200,001 backticks), most under 60 ms. The bound is 26 times the worst and a fifth of the
  // hook's deadline; a quadratic reader takes minutes on these inputs.
  const BOUND_MS = 5_000;
  const timed = (command: string) => {
    const start = performance.now();
    const w = read(command);
    return { w, ms: performance.now() - start };
  };

  it("a 1 MB command is not parsed: its path-like words, at most MAX_GUESSES, stand for it", () => {
    const long = "rm " + Array.from({ length: 80_000 }, (_, i) => `src/f${i}.ts`).join(" ");
    expect(long.length).toBeGreaterThan(MAX_COMMAND);
    const { w, ms } = timed(long);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.unread).toBe(true);
    expect(w.readOnly).toBe(false);
    expect(w.targets).toHaveLength(MAX_GUESSES);
    expect(w.targets.every((t) => t.certainty === "uncertain" && t.mode === "write")).toBe(true);
    expect(w.targets[0]!.rel).toBe("src/f0.ts");
  });

  it("a 1 MB word", () => {
    const { w, ms } = timed("echo " + "x".repeat(1 << 20));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.unread).toBe(true);
  });

  it("10,000 nested subshells: past the token budget, unread; 500 are read", () => {
    const { w, ms } = timed("(".repeat(10_000) + "rm src/peer.ts" + ")".repeat(10_000));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(render(w)).toEqual(["unread", "uw:src/peer.ts"]);
    expect(render(read("(".repeat(500) + "rm src/peer.ts" + ")".repeat(500)))).toEqual(["nr:src/peer.ts"]);
  });

  it("10,000 nested command substitutions: read to a depth, the rest unread", () => {
    const { w, ms } = timed("echo " + "$(echo ".repeat(10_000) + "src/peer.ts" + ")".repeat(10_000));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.unread).toBe(true);
    expect(w.targets.map((t) => t.rel)).toContain("src/peer.ts");
  });

  it("sh -c nested past the depth is unread, its paths uncertain", () => {
    let command = "rm src/peer.ts";
    for (let i = 0; i < 12; i++) command = `sh -c '${command.replace(/'/g, `'\\''`)}'`;
    const { w, ms } = timed(command);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.unread).toBe(true);
    expect(w.targets.some((t) => t.rel === "src/peer.ts" && t.certainty === "uncertain")).toBe(true);
  });

  it("thousands of here-documents", () => {
    const n = 5_000;
    const command = "cat" + " <<A".repeat(n) + " > src/peer.ts\n" + "x\nA\n".repeat(n) + "rm src/held/x.ts";
    const { w, ms } = timed(command);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(render(w)).toEqual(["nr:src/held/x.ts", "nw:src/peer.ts"]);
  });

  it("thousands of here-documents fed to an interpreter: past 64, unread", () => {
    const body = (n: number) =>
      "python3 -" + " <<A".repeat(n) + "\n" + "open('src/peer.ts','w')\nA\n".repeat(n);
    const { w, ms } = timed(body(3_000));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(render(w)).toEqual(["unread", "uw:src/peer.ts"]);
    expect(render(read(body(3)))).toEqual(["uw:src/peer.ts"]);
  });

  it("an unbalanced quote: what was read stands, and the rest is unread", () => {
    for (const command of [
      "rm src/a.ts; echo 'src/peer.ts",
      'rm src/a.ts "src/held/x.ts',
      "echo `rm src/peer.ts",
    ]) {
      const { w, ms } = timed(command);
      expect(ms, command).toBeLessThan(BOUND_MS);
      expect(w.unread, command).toBe(true);
      expect(w.readOnly).toBe(false);
      expect(w.targets.some(overlaps), command).toBe(true);
    }
  });

  it("100,000 semicolons, words, redirects and expansions", () => {
    const cases = [
      ";".repeat(100_000) + "rm src/peer.ts",
      "true;".repeat(50_000) + "rm src/peer.ts",
      "echo " + "$a".repeat(100_000),
      "echo " + '"$a"'.repeat(60_000),
      "x".repeat(100_000) + "=".repeat(100_000),
      "echo" + " >f".repeat(60_000),
      "echo" + " <<<x".repeat(50_000),
      "cat " + "<<'".repeat(60_000),
      "echo " + "${".repeat(100_000),
      "echo " + "$((".repeat(80_000),
      "a" + "|a".repeat(100_000),
      "echo " + "`".repeat(200_001),
      "eval " + "eval ".repeat(40_000) + "rm src/peer.ts",
      "bash -c " + "\\'".repeat(100_000),
    ];
    for (const command of cases) {
      const { ms } = timed(command);
      expect(ms, command.slice(0, 40)).toBeLessThan(BOUND_MS);
    }
  });

  it("too many targets: unread past the bound", () => {
    const command = Array.from({ length: 5_000 }, (_, i) => `echo x > f${i}`).join("; ");
    const { w, ms } = timed(command);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.unread).toBe(true);
  });

  it("a long one-liner script", () => {
    const script = Array.from({ length: 20_000 }, (_, i) => `f('src/x${i}.ts')`).join(";");
    const { w, ms } = timed(`node -e "${script}"`);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(w.targets.length).toBeGreaterThan(0);
    expect(w.targets.every((t) => t.certainty === "uncertain")).toBe(true);
  });

  it("the shell reader reports a quote left open", () => {
    expect(simpleCommands("echo 'x", "/").some((c) => c.unread === "echo 'x")).toBe(true);
    expect(simpleCommands("echo 'x'", "/").some((c) => c.unread !== undefined)).toBe(false);
  });
});
