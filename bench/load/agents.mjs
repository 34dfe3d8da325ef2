// The 200-agent generator, in its own process. Each simulated agent has its
// own session and, like a guarded coding agent, publishes a task, declares an
// intent and claims a scope of its own (the setup phase, all agents ramping
// up together); then, for the measured window, it reads the kill switch as
// its tool calls would, polls, checkpoints every few seconds, and starts a
// new task (publish, intent, scope) when its task ends.
// Agent i talks to targets[i % targets.length].
// Polling is a long-poll (x-cohent-wait, spec.waitSeconds, default 20; 0 for the
// old fixed-interval poll every pollMs): each agent keeps one open and answers
// it with a fresh one, so a change reaches it as soon as it is written.
// With spec.mix (the contention mix), the agents belong to spec.tokens' people (agent i to tokens[i % n]),
// and share components, outputs and paths: ten agents a component, four an output and an area, so claims
// meet peers' (a refused scope joins the queue: `queue: true`), queues form and the resolver finds candidates.
// Spec (argv[2], JSON): { targets, token, tokens, mix, agents, seconds, setupSeconds, rampMs,
// sessionMs, pollMs, waitSeconds, checkpointMs, taskMs, prefix, pids }. Prints per-operation
// counts and latencies, and the CPU the `pids` used in the window, as JSON.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";

const spec = JSON.parse(process.argv[2]);
const { targets, token, agents, seconds, prefix } = spec;
const mix = !!spec.mix;
const tokens = spec.tokens?.length ? spec.tokens : [token];
/** The contention mix's shares: agents per component, per output and per area. */
const shared = (n) => Math.max(1, Math.floor(agents / n));
const areaOf = (i, task) => (mix ? `shared/area-${(i + task * 7) % shared(4)}` : `agents/a${i}`);
const rampMs = spec.rampMs ?? 2000;
const GRACE_MS = 3000; // requests still open this long after a phase ends are cut and counted
const every = {
  session: spec.sessionMs ?? 2000,
  poll: spec.pollMs ?? 5000,
  checkpoint: spec.checkpointMs ?? 5000,
};
const taskMs = spec.taskMs ?? 30000;
const waitSeconds = spec.waitSeconds ?? 20;

/** The whole machine's CPU ticks, busy and all (every core), from /proc/stat. */
const machineTicks = () => {
  const t = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const all = t.reduce((a, b) => a + b, 0);
  return { busy: all - t[3] - t[4], all }; // less idle and iowait
};
/**
 * CPU ms of every PostgreSQL process on the machine (its backends included), read from /proc: 0 on
 * SQLite. A backend that exits within the window takes its share with it: a lower bound.
 */
const databaseCpuMs = () => {
  let sum = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes(" (postgres) ")) continue;
      const f = stat.split(") ")[1].split(" ");
      sum += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      /* gone meanwhile */
    }
  }
  return sum;
};

const cpuMs = () =>
  (spec.pids ?? []).reduce((sum, pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return sum + (Number(f[11]) + Number(f[12])) * 10; // utime + stime, 100 ticks per second
  }, 0);

const trace = spec.trace ? [] : null; // [ms since start, op, ms, failure]; the first row is the hrtime (µs) at start
const traceStart = performance.now();
const traceHr = process.hrtime.bigint();
const phases = { setup: { samples: {}, failures: {} }, window: { samples: {}, failures: {} } };
let phase = "setup";
let phaseEnd = performance.now() + (spec.setupSeconds ?? 15) * 1000;

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const jitter = (ms) => ms * (0.8 + 0.4 * Math.random());

async function call(op, base, headers, body) {
  const p = phases[phase];
  const t = performance.now();
  // A failed or cut request stays in the percentiles (a cut one at the time it was cut: a lower bound) and is counted by its cause.
  const fail = (code) => {
    trace?.push([Math.round(t - traceStart), op, Math.round(performance.now() - t), code]);
    (p.samples[op] ??= []).push(performance.now() - t);
    p.failures[op] = { ...p.failures[op], [code]: (p.failures[op]?.[code] ?? 0) + 1 };
    return null;
  };
  try {
    const res = await fetch(`${base}/api/agent${op === "session" ? "/session" : ""}`, {
      method: body ? "POST" : "GET",
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(Math.max(1, Math.floor(phaseEnd + GRACE_MS - t))),
    });
    const json = await res.json();
    if (!res.ok || !json.ok) return fail(json?.error?.code ?? `HTTP ${res.status}`);
    (p.samples[op] ??= []).push(performance.now() - t);
    trace?.push([Math.round(t - traceStart), op, Math.round(performance.now() - t), 0]);
    return json.data;
  } catch (err) {
    return fail(err?.name === "TimeoutError" ? "cut at phase end" : (err?.name ?? "error"));
  }
}

/** publish, intent, scope: one task's start. */
async function startTask(i, task, base, headers) {
  const area = areaOf(i, task);
  const pub = await call("publish", base, headers, {
    type: "publish",
    prompt: `Agent ${i}, task ${task}: work on ${area}`,
    paths: [area],
  });
  if (!pub) return null;
  const decided = await call("intent", base, headers, {
    type: "intent",
    intentId: pub.intentId,
    intent: {
      objective: `Agent ${i} task ${task}`,
      plan: ["Edit the module", "Run its tests"],
      components: [mix ? `component-${(i + task * 3) % shared(10)}` : `module-${i}`],
      outputs: [mix ? `output-${(i + task * 5) % shared(4)}` : `agent-${i}-task-${task}`],
    },
  });
  const scoped = await call("scope", base, headers, {
    type: "scope",
    intentId: pub.intentId,
    paths: [area],
    ...(mix ? { queue: true } : {}),
  });
  // A refused claim (queued) works without paths until its grant: its checkpoints claim nothing.
  return {
    intentId: pub.intentId,
    cursor: decided?.packet?.cursor ?? "0",
    step: 0,
    area: scoped ? area : null,
  };
}

const state = [];
const pollers = [];

/**
 * One open long-poll per agent for the window: answered at a change (or empty when its wait ends), then
 * asked again from the new cursor. Agents at their own pace hold theirs out of step: each agent's first
 * one opens within the first kill-switch interval and holds a random part of a whole wait, as if opened
 * before the window, and the last one ends within a second after the window (inside GRACE_MS), not
 * before it. Opened together with whole waits, each ending a second before the window's end, all 200
 * waits ended in the same 0.2 s and 200 immediate polls followed in the window's last second (the
 * trace: 29 of the 71 kill-switch reads over 25 ms on two PostgreSQL instances fell in that second).
 */
function longPolls(a) {
  const run = (async () => {
    await sleep(Math.random() * every.session);
    let first = true;
    while (performance.now() < phaseEnd - 250) {
      const w = a.work;
      if (!w) {
        await sleep(200);
        continue;
      }
      const whole = first ? 1 + Math.floor(Math.random() * waitSeconds) : waitSeconds;
      first = false;
      const wait = Math.min(whole, Math.floor((phaseEnd - performance.now()) / 1000) + 1);
      const polled = await call("poll", a.base, {
        ...a.headers,
        "x-cohent-intent": w.intentId,
        "x-cohent-cursor": w.cursor,
        "x-cohent-wait": String(wait),
      });
      if (polled?.cursor && a.work === w) w.cursor = polled.cursor;
      if (!polled) await sleep(500);
    }
  })();
  pollers.push(run);
}
const setupStart = performance.now();
await Promise.all(
  Array.from({ length: agents }, async (_, i) => {
    const base = targets[i % targets.length];
    const headers = {
      authorization: `Bearer ${tokens[i % tokens.length]}`,
      "x-cohent-session": `${prefix}-agent-${i}`,
      "content-type": "application/json",
    };
    await sleep(Math.random() * rampMs);
    state[i] = { base, headers, task: 0, work: await startTask(i, 0, base, headers) };
  }),
);
const setupSeconds = (performance.now() - setupStart) / 1000;

phase = "window";
const start = performance.now();
phaseEnd = start + seconds * 1000;
const cpuBefore = cpuMs();
const machineBefore = machineTicks();
const databaseBefore = databaseCpuMs();
const generatorBefore = process.cpuUsage();
await Promise.all(
  state.map(async (a, i) => {
    // Tasks started in the setup end at random points, so new tasks spread over the window.
    let taskEnd = start + Math.random() * taskMs;
    const next = {
      session: start + Math.random() * every.session,
      checkpoint: start + Math.random() * every.checkpoint,
    };
    if (!waitSeconds) next.poll = start + Math.random() * every.poll;
    else void longPolls(a);
    while (performance.now() < phaseEnd) {
      if (!a.work || performance.now() >= taskEnd) {
        a.work = await startTask(i, ++a.task, a.base, a.headers);
        taskEnd = performance.now() + jitter(taskMs);
        if (!a.work) await sleep(1000);
        continue;
      }
      const op = Object.keys(next).reduce((x, y) => (next[x] <= next[y] ? x : y));
      await sleep(Math.min(next[op], taskEnd, phaseEnd) - performance.now());
      if (performance.now() >= phaseEnd || performance.now() >= taskEnd) continue;
      next[op] = performance.now() + jitter(every[op]);
      const w = a.work;
      if (op === "session") await call("session", a.base, a.headers);
      else if (op === "poll") {
        const polled = await call("poll", a.base, {
          ...a.headers,
          "x-cohent-intent": w.intentId,
          "x-cohent-cursor": w.cursor,
        });
        if (polled?.cursor) w.cursor = polled.cursor;
      } else {
        w.step++;
        await call("checkpoint", a.base, a.headers, {
          type: "checkpoint",
          intentId: w.intentId,
          status: "working",
          summary: `step ${w.step}`,
          ...(w.area ? { paths: [`${w.area}/file-${w.step % 3}.ts`] } : {}),
        });
      }
    }
  }),
);
const cpu = cpuMs() - cpuBefore;
const machineAfter = machineTicks();
const generatorUsed = process.cpuUsage(generatorBefore);
// Who used the machine in the window: its cores' busy share, the database's and this generator's CPU.
const machine = {
  cores: availableParallelism(),
  busy: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.all - machineBefore.all),
  databaseCpuMs: databaseCpuMs() - databaseBefore,
  generatorCpuMs: (generatorUsed.user + generatorUsed.system) / 1000,
};
// The window's length, not the long-polls' wind-down: the last ones end within a second after it.
const elapsed = (performance.now() - start) / 1000;
await Promise.all(pollers);

const pct = (s, p) => (s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null);
const stats = (p, secs) =>
  Object.fromEntries(
    ["session", "poll", "checkpoint", "publish", "intent", "scope"].map((op) => {
      const s = (p.samples[op] ?? []).sort((a, b) => a - b);
      return [
        op,
        {
          count: s.length,
          perSecond: s.length / secs,
          p50: pct(s, 50),
          p99: pct(s, 99),
          failures: p.failures[op] ?? {},
        },
      ];
    }),
  );
if (trace)
  writeFileSync(
    spec.trace,
    [[Number(traceHr / 1000n)], ...trace].map((r) => JSON.stringify(r)).join("\n") + "\n",
  );
process.stdout.write(
  JSON.stringify({
    setupSeconds,
    setup: stats(phases.setup, setupSeconds),
    elapsed,
    cpuMs: cpu,
    machine,
    ops: stats(phases.window, elapsed),
  }) + "\n",
);
process.exit(0);
