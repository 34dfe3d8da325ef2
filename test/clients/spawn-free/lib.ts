// Helpers for the spawn-free scenarios and probes (issue #44 items 1 and 2):
// a logging `node` first on PATH, what it saw, the marks the MCP server left,
// and stand-ins for a failing MCP server in a throwaway checkout.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One `node` start as the wrapper logged it: its pid, its ancestry (pid, ppid, args), six levels up, and its argv. */
export interface NodeStart {
  at: number;
  pid: number;
  args: string;
  /** `ps -o pid=,ppid=,args=` of the wrapper itself, then each ancestor, nearest first. */
  chain: { pid: number; ppid: number; args: string }[];
}

/**
 * A directory holding `node`: a POSIX sh wrapper that logs its own ancestry to `log` (one block per
 * start) and then execs the real node with the same argv (so the pid it logged is the node process's).
 * Put it first on the client's PATH: every `node` the client, its hooks and its MCP servers start
 * by name goes through it.
 */
export function nodeWrapper(dir: string, log: string, realNode = process.execPath): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "node");
  writeFileSync(
    file,
    `#!/bin/sh
p=$$
n=0
b=$(printf '=== %s %s' "$(date +%s%3N)" "$*")
while [ -n "$p" ] && [ "$p" -gt 1 ] && [ $n -lt 6 ]; do
  n=$((n + 1))
  l=$(ps -o pid=,ppid=,args= -p "$p" 2>/dev/null) || break
  [ -n "$l" ] || break
  b="$b
$l"
  p=$(printf '%s\\n' "$l" | awk '{print $2}')
done
# One write per start: concurrent starts (the hook and the server) do not interleave.
printf '%s\\n' "$b" >> ${JSON.stringify(log)} 2>/dev/null
exec ${JSON.stringify(realNode)} "$@"
`,
  );
  chmodSync(file, 0o755);
  return dir;
}

export function readNodeLog(log: string): NodeStart[] {
  if (!existsSync(log)) return [];
  const out: NodeStart[] = [];
  for (const block of readFileSync(log, "utf8").split(/^=== /m).filter(Boolean)) {
    const [head, ...rest] = block.split("\n").filter((l) => l.length > 0);
    const m = /^(\d+) (.*)$/.exec(head ?? "");
    const chain = rest.map((l) => {
      const r = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l);
      return r ? { pid: Number(r[1]), ppid: Number(r[2]), args: r[3]! } : { pid: 0, ppid: 0, args: l };
    });
    out.push({ at: Number(m?.[1] ?? 0), args: m?.[2] ?? head ?? "", pid: chain[0]?.pid ?? 0, chain });
  }
  return out;
}

/** The command hook's node processes (`… cohent.cjs hook --host claude`). */
export const isHookNode = (s: NodeStart) => /cohent\.cjs hook\b/.test(s.args);
/** The MCP server's node (`.cohent/cohent.mjs mcp`, or a stand-in in its place). */
export const isServerNode = (s: NodeStart) => /cohent\.mjs mcp\b|cohent-mcp-standin/.test(s.args);

/** The marks in `.cohent/spawn-free/`: `<session>.<pid>` → the writer's pid (the file's content). */
export function marks(repo: string): { session: string; ppid: number; writer: number }[] {
  const dir = join(repo, ".cohent", "spawn-free");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => {
    const i = name.lastIndexOf(".");
    return {
      session: name.slice(0, i),
      ppid: Number(name.slice(i + 1)),
      writer: Number(readFileSync(join(dir, name), "utf8").trim()),
    };
  });
}

/** A readable process tree for FINDINGS.md / a failure message. */
export function chainText(s: NodeStart): string {
  return s.chain
    .map((c) => `${String(c.pid).padStart(7)} ${String(c.ppid).padStart(7)} ${c.args.slice(0, 160)}`)
    .join("\n");
}

/**
 * The gate commands of a checkout's `.claude/settings.json` rewritten without their inner `[exec] sh -c '…'`:
 * the script becomes the command itself, run by Claude Code's own `/bin/sh -c` (so `$PPID` there is
 * Claude Code). A measurement of the fix FINDINGS.md proposes, in a throwaway checkout only.
 */
export function unwrapGates(repo: string): number {
  const file = join(repo, ".claude", "settings.json");
  const s = JSON.parse(readFileSync(file, "utf8"));
  let n = 0;
  for (const ev of ["PreToolUse", "PostToolUse"])
    for (const group of s.hooks?.[ev] ?? [])
      for (const h of group.hooks ?? [])
        if (h.type === "command" && /^(exec )?sh -c '.*spawn-free.*'$/s.test(h.command)) {
          h.command = h.command.slice(h.command.indexOf("'") + 1, -1);
          n++;
        }
  writeFileSync(file, JSON.stringify(s, null, 2) + "\n");
  return n;
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));
const writeJson = (file: string, v: unknown) => writeFileSync(file, JSON.stringify(v, null, 2) + "\n");

/** `.mcp.json`'s `cohent` entry removed (the server is not configured). */
export function dropMcpEntry(repo: string): void {
  const file = join(repo, ".mcp.json");
  const s = readJson(file);
  delete s.mcpServers.cohent;
  writeJson(file, s);
}

export type StandinMode = "healthy" | "startfail" | `late:${number}` | "die" | "hang";

/** `.mcp.json`'s `cohent` entry pointed at the stand-in (standin-mcp.mjs, copied into .cohent/), in `mode`. */
export function useStandin(repo: string, mode: StandinMode): void {
  writeFileSync(
    join(repo, ".cohent", "cohent-mcp-standin.mjs"),
    readFileSync(new URL("./standin-mcp.mjs", import.meta.url)),
  );
  setStandinMode(repo, mode);
  const file = join(repo, ".mcp.json");
  const s = readJson(file);
  s.mcpServers.cohent = { command: "node", args: [".cohent/cohent-mcp-standin.mjs"] };
  writeJson(file, s);
}

export function setStandinMode(repo: string, mode: StandinMode): void {
  writeFileSync(join(repo, ".cohent", "standin-mode"), mode + "\n");
}

export function standinLog(repo: string): Record<string, unknown>[] {
  const f = join(repo, ".cohent", "standin.log");
  if (!existsSync(f)) return [];
  return readFileSync(f, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every handler of PreToolUse and PostToolUse in `.claude/settings.json`, for a test-only change. */
function toolHandlers(repo: string, edit: (h: Record<string, unknown>[]) => Record<string, unknown>[]): void {
  const file = join(repo, ".claude", "settings.json");
  const s = readJson(file);
  for (const ev of ["PreToolUse", "PostToolUse"])
    for (const group of s.hooks?.[ev] ?? []) group.hooks = edit(group.hooks ?? []);
  writeJson(file, s);
}

/** The mcp_tool handlers' timeout (seconds), shortened for the hang and late-connect modes. */
export function setMcpTimeout(repo: string, seconds: number): void {
  toolHandlers(repo, (hs) => hs.map((h) => (h.type === "mcp_tool" ? { ...h, timeout: seconds } : h)));
}

/** The shell gates removed: the mcp_tool handler alone decides PreToolUse/PostToolUse (the MCP path, isolated). */
export function dropGates(repo: string): void {
  toolHandlers(repo, (hs) =>
    hs.filter((h) => !(h.type === "command" && /spawn-free/.test(String(h.command)))),
  );
}

/** The gate that spawned this hook node, and the `$PPID` it saw (null: not spawned by a gate). */
export function gateOf(s: NodeStart): { gate: number; gatePpid: number } | null {
  const g = s.chain[1];
  return g && /spawn-free/.test(g.args) ? { gate: g.pid, gatePpid: g.ppid } : null;
}

/**
 * The gates as init wrote them before e8041eb (`sh -c '…'` without `exec`): Claude Code's `/bin/sh -c`
 * (dash) stays between it and the gate, so the gate's `$PPID` is that shell (FINDINGS.md §1).
 */
export function gatesWithoutExec(repo: string): number {
  let n = 0;
  toolHandlers(repo, (hs) =>
    hs.map((h) => {
      const cmd = String(h.command ?? "");
      if (h.type !== "command" || !/spawn-free/.test(cmd) || !cmd.startsWith("exec ")) return h;
      n++;
      return { ...h, command: cmd.slice("exec ".length) };
    }),
  );
  return n;
}
