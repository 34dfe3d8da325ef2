import { appendFileSync } from "node:fs";
import { callRetrying, clockFrom, sleep, writeKey, type Recorder } from "./calls.js";
import type { OpRecord } from "./history.js";

/**
 * An agent process of the torture (`cohent torture --worker <spec>`): a few agents, each one session,
 * working in a loop as a guarded coding agent does: publish a task, declare its intent, claim a path
 * that peers want too, checkpoint a few steps, then release it or complete the task. Every call goes
 * to the history file; each session's id goes to the parent (for the person's pause and resume).
 * Sequential per agent, like a model's tool calls; an answer's higher lease epoch drops the claim the
 * agent thought it held, as the adapter does.
 */
export interface WorkerSpec {
  name: string;
  runId: string;
  startedAt: number;
  /** Milliseconds since the start at which to stop. */
  endAt: number;
  instances: string[];
  historyFile: string;
  agents: { name: string; token: string }[];
  /** The shared paths the agents contend for. */
  paths: string[];
  /** Working checkpoints carry the claimed path too (a checkpoint with paths claims them, as scope does). */
  checkpointClaims: boolean;
  timeoutMs: number;
}

export async function runWorker(spec: WorkerSpec): Promise<void> {
  const now = clockFrom(spec.startedAt);
  let buffer: string[] = [];
  const flush = () => {
    if (buffer.length) appendFileSync(spec.historyFile, buffer.join(""));
    buffer = [];
  };
  const timer = setInterval(flush, 250);
  let n = 0;
  const rec: Recorder = {
    now,
    record: (op: OpRecord) => void buffer.push(JSON.stringify(op) + "\n"),
    nextId: () => `${spec.name}-${++n}`,
  };
  const told = new Set<string>();
  await Promise.all(spec.agents.map((a, i) => agentLoop(spec, rec, a, i, told)));
  clearInterval(timer);
  flush();
}

async function agentLoop(
  spec: WorkerSpec,
  rec: Recorder,
  agent: { name: string; token: string },
  index: number,
  told: Set<string>,
): Promise<void> {
  const process_ = `agent:${agent.name}`;
  const session = `torture-${spec.runId}-${agent.name}`;
  const headers = { authorization: `Bearer ${agent.token}`, "x-cohent-session": session };
  let home = index;
  let task = 0;
  let writes = 0;
  let intentId: string | null = null;
  /** The path this agent believes it holds; a moved fence drops it (and ends its steps). */
  let held: string[] | null;
  let epoch = 0;
  const pick = () => spec.paths[Math.floor(Math.random() * spec.paths.length)]!;
  const live = () => rec.now() < spec.endAt;
  const post = async (
    op: OpRecord["op"],
    body: Record<string, unknown>,
    args: OpRecord["args"],
    write?: string,
  ) => {
    const a = await callRetrying(
      rec,
      spec.instances,
      home,
      {
        process: process_,
        session,
        op,
        method: "POST",
        path: "/api/agent",
        headers,
        body,
        ...(write ? { write } : {}),
        args,
        timeoutMs: spec.timeoutMs,
      },
      3,
      spec.endAt,
    );
    home = a.instance;
    if (a.sessionId && !told.has(session)) {
      told.add(session);
      process.send?.({ session, sessionId: a.sessionId, process: process_ });
    }
    if (a.epoch !== undefined && a.epoch > epoch) {
      epoch = a.epoch;
      held = null; // the fence moved: whatever we held was freed without us asking
    }
    return a;
  };
  while (live()) {
    if (!intentId) {
      task++;
      const prompt = `torture ${spec.runId} ${agent.name} task ${task}`;
      const p = await post(
        "publish",
        { type: "publish", prompt },
        { prompt },
        writeKey(`${agent.name}.p${task}`),
      );
      if (p.outcome !== "ok") {
        await sleep(300);
        continue;
      }
      intentId = p.data.intentId as string;
      const objective = `${agent.name} task ${task}`;
      await post(
        "intent",
        { type: "intent", intentId, intent: { objective, outputs: [`out-${agent.name}-${task}`] } },
        { intentId, objective },
        writeKey(`${agent.name}.i${task}`),
      );
    }
    const path = pick();
    const s = await post(
      "scope",
      { type: "scope", intentId, paths: [path] },
      { intentId, paths: [path] },
      writeKey(`${agent.name}.s${task}`),
    );
    if (s.outcome === "ok") {
      held = [path];
      process.send?.({ holds: true }); // the parent freezes this process while an agent holds a claim
    } else if (s.code === "INTENT_CLOSED" || s.code === "INTENT_NOT_FOUND") {
      intentId = null;
      continue;
    } else {
      await sleep(s.code === "SESSION_PAUSED" ? 500 : 150 + Math.random() * 250);
      continue;
    }
    // A few steps of work inside the claim.
    const steps = 1 + Math.floor(Math.random() * 3);
    for (let step = 1; step <= steps && live() && held; step++) {
      await sleep(100 + Math.random() * 200);
      const summary = `torture ${spec.runId} ${agent.name} task ${task} step ${step} #${++writes}`;
      const claimed = spec.checkpointClaims ? { paths: [path] } : {};
      const c = await post(
        "checkpoint",
        { type: "checkpoint", intentId, status: "working", summary, ...claimed },
        { intentId, status: "working", summary, ...claimed },
        writeKey(`${agent.name}.c${task}.${step}`),
      );
      if (c.code === "INTENT_CLOSED") intentId = null;
      if (spec.checkpointClaims && c.outcome !== "ok") held = null; // refused: the claim it re-asked for is not ours
      if (!intentId) break;
    }
    if (!intentId) continue;
    if (Math.random() < 0.4) {
      const summary = `torture ${spec.runId} ${agent.name} task ${task} done #${++writes}`;
      await post(
        "checkpoint",
        { type: "checkpoint", intentId, status: "completed", summary },
        { intentId, status: "completed", summary },
        writeKey(`${agent.name}.c${task}.done`),
      );
      intentId = null;
    } else {
      await post(
        "scope",
        { type: "scope", intentId, paths: [] },
        { intentId, paths: [] },
        writeKey(`${agent.name}.r${task}.${Math.floor(rec.now())}`),
      );
    }
    await sleep(50 + Math.random() * 150);
  }
}
