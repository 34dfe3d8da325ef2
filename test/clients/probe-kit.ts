// What the probes share: checks that collect instead of throwing at the first
// miss (one client run answers many questions), the closed/open verdict of a
// gated write, and the payload fixtures (recorded with COHENT_PROBE_RECORD=1,
// otherwise compared by shape: each payload's keys and value types, tool
// inputs included, must match the recorded one).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HookCall, ProbeRun, ProbeWorkspace } from "./probe-harness.ts";
import { WORKSPACE } from "./paths.ts";

export const FIXTURES = join(WORKSPACE, "test", "adapter", "fixtures", "payloads");
export const RECORD = process.env.COHENT_PROBE_RECORD === "1";

export interface ProbeCheck {
  name: string;
  ok: boolean;
  expected: string;
  actual: string;
}

export class Checks {
  readonly list: ProbeCheck[] = [];
  eq(name: string, actual: unknown, expected: unknown): void {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    this.list.push({ name, ok: a === e, expected: e, actual: a });
  }
  ok(name: string, cond: boolean, actual: unknown): void {
    this.list.push({ name, ok: cond, expected: "true", actual: JSON.stringify(actual) });
  }
  failed(): ProbeCheck[] {
    return this.list.filter((c) => !c.ok);
  }
}

export type Outcome = "closed" | "open";

/** closed: the file the gated call would write is absent. */
export function outcome(ws: ProbeWorkspace, rel: string): Outcome {
  return existsSync(join(ws.repo, rel)) ? "open" : "closed";
}

/** The verdict on one gated step, and whether the model saw `reason` in that step's tool result. */
export function gate(
  c: Checks,
  ws: ProbeWorkspace,
  run: ProbeRun,
  step: string,
  file: string,
  expected: Outcome,
  reason?: string,
): void {
  const got = outcome(ws, file);
  const result = run.results.get(step);
  c.eq(`${step}: ${file}`, got, expected);
  if (reason && expected === "closed")
    c.ok(`${step}: the model saw "${reason}"`, !!result && result.includes(reason), result ?? null);
}

/** Machine paths and ports replaced by placeholders: /repo, /home/user, /hooks, /run, 127.0.0.1:PORT. */
export function sanitize(ws: ProbeWorkspace, value: unknown): unknown {
  let text = JSON.stringify(value);
  for (const [from, to] of [
    [ws.repo, "/repo"],
    [ws.home, "/home/user"],
    [ws.hookDir, "/hooks"],
    [ws.dir, "/run"],
  ] as const)
    text = text.split(from).join(to);
  text = text.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT");
  return JSON.parse(text);
}

const DEEP = new Set([
  "toolArgs",
  "tool_input",
  "toolInput",
  "toolResult",
  "tool_result",
  "tool_response",
  "input",
  "output",
  "args",
  "properties",
]);

function typeOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** A payload's shape: `key:type` for every key, and inside tool inputs and results one level deeper. */
export function shapeOf(value: unknown, prefix = "", depth = 0): string[] {
  if (typeOf(value) !== "object") return [`${prefix || "."}:${typeOf(value)}`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out.push(`${prefix}${k}:${typeOf(v)}`);
    if (typeOf(v) === "object" && DEEP.has(k) && depth < 2)
      out.push(...shapeOf(v, `${prefix}${k}.`, depth + 1));
  }
  return out.sort();
}

/** `<event>-<tool>[-subagent].json`, safe as a file name. */
export function fixtureName(event: string, tool?: string | null, sub = false): string {
  const base = [event, tool].filter(Boolean).join("-") + (sub ? "-subagent" : "");
  return base.replace(/[^A-Za-z0-9._-]+/g, "-") + ".json";
}

/**
 * The first payload seen under each name: recorded (RECORD) or compared by shape with the
 * recorded fixture. A name without a fixture is listed in `unrecorded`, not failed: some events
 * fire only sometimes; the probes check the ones they rely on by name.
 */
export function fixtures(
  c: Checks,
  ws: ProbeWorkspace,
  folder: string,
  named: { name: string; payload: unknown }[],
): { names: string[]; unrecorded: string[] } {
  const dir = join(FIXTURES, folder);
  const first = new Map<string, unknown>();
  for (const n of named) if (!first.has(n.name)) first.set(n.name, sanitize(ws, n.payload));
  const unrecorded: string[] = [];
  if (RECORD) mkdirSync(dir, { recursive: true });
  for (const [name, payload] of first) {
    const file = join(dir, name);
    if (RECORD) {
      writeFileSync(file, JSON.stringify(payload, null, 2) + "\n");
      continue;
    }
    if (!existsSync(file)) {
      unrecorded.push(name);
      continue;
    }
    const recorded = JSON.parse(readFileSync(file, "utf8"));
    c.eq(`payload shape ${folder}/${name}`, shapeOf(payload), shapeOf(recorded));
  }
  return { names: [...first.keys()], unrecorded };
}

/** Hook calls as fixture entries, named by event and tool (payload field names of every dialect). */
export function namedCalls(calls: HookCall[], isSub: (p: any) => boolean = () => false) {
  return calls
    .filter((h) => h.payload && typeof h.payload === "object")
    .map((h) => {
      const p = h.payload;
      const event = String(p.hook_event_name ?? p.hookName ?? h.label).replace(/^claude:/, "");
      const tool = p.tool_name ?? p.toolName ?? p.input?.tool ?? null;
      return {
        name: fixtureName(h.label.startsWith("claude:") ? event : h.label, tool, isSub(p)),
        payload: p,
      };
    });
}
