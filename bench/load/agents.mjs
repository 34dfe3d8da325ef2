// The 200-agent generator, in its own process. Each simulated agent has its
// own session and, like a guarded coding agent, publishes a task, declares an
// intent, claims a scope of its own, then until the task ends reads the
// kill switch on every "tool call", polls, and checkpoints every few seconds;
// then it starts its next task. Agent i talks to targets[i % targets.length].
// Spec (argv[2], JSON): { targets, token, agents, seconds, rampMs, sessionMs,
// pollMs, checkpointMs, taskMs, prefix }. Prints per-operation counts and
// latencies as JSON on stdout.

const spec = JSON.parse(process.argv[2]);
const { targets, token, agents, seconds, prefix } = spec;
const rampMs = spec.rampMs ?? 2000;
const every = { session: spec.sessionMs ?? 1000, poll: spec.pollMs ?? 2000, checkpoint: spec.checkpointMs ?? 3000, task: spec.taskMs ?? 10000 };

const samples = {};
const failures = {};
const record = (op, ms, failure) => {
  if (failure) failures[op] = { ...failures[op], [failure]: (failures[op]?.[failure] ?? 0) + 1 };
  else (samples[op] ??= []).push(ms);
};

const start = performance.now();
const deadline = start + seconds * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const jitter = (ms) => ms * (0.8 + 0.4 * Math.random());

async function call(op, base, headers, body) {
  const t = performance.now();
  try {
    const res = await fetch(`${base}/api/agent${op === "session" ? "/session" : ""}`, {
      method: body ? "POST" : "GET",
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const json = await res.json();
    if (!res.ok || !json.ok) {
      record(op, 0, json?.error?.code ?? `HTTP ${res.status}`);
      return null;
    }
    record(op, performance.now() - t);
    return json.data;
  } catch (err) {
    record(op, 0, err?.name ?? "error");
    return null;
  }
}

async function agent(i) {
  const base = targets[i % targets.length];
  const headers = { authorization: `Bearer ${token}`, "x-cohent-session": `${prefix}-agent-${i}`, "content-type": "application/json" };
  await sleep(Math.random() * rampMs);
  for (let task = 0; performance.now() < deadline; task++) {
    const pub = await call("publish", base, headers, { type: "publish", prompt: `Agent ${i}, task ${task}: work on module ${i}`, paths: [`agents/a${i}`] });
    if (!pub) {
      await sleep(1000);
      continue;
    }
    const intentId = pub.intentId;
    const decided = await call("intent", base, headers, {
      type: "intent",
      intentId,
      intent: { objective: `Agent ${i} task ${task}`, plan: ["Edit the module", "Run its tests"], components: [`module-${i}`], outputs: [`agent-${i}-task-${task}`] },
    });
    await call("scope", base, headers, { type: "scope", intentId, paths: [`agents/a${i}`] });
    let cursor = decided?.packet?.cursor ?? "0";
    const taskEnd = performance.now() + jitter(every.task);
    const next = { session: performance.now() + jitter(every.session), poll: performance.now() + jitter(every.poll), checkpoint: performance.now() + jitter(every.checkpoint) };
    let step = 0;
    while (performance.now() < Math.min(taskEnd, deadline)) {
      const op = Object.keys(next).reduce((a, b) => (next[a] <= next[b] ? a : b));
      await sleep(Math.min(next[op], taskEnd, deadline) - performance.now());
      if (performance.now() >= Math.min(taskEnd, deadline)) break;
      next[op] = performance.now() + jitter(every[op]);
      if (op === "session") await call("session", base, headers);
      else if (op === "poll") {
        const polled = await call("poll", base, { ...headers, "x-cohent-intent": intentId, "x-cohent-cursor": cursor });
        if (polled?.cursor) cursor = polled.cursor;
      } else await call("checkpoint", base, headers, { type: "checkpoint", intentId, status: "working", summary: `step ${++step}`, paths: [`agents/a${i}/file-${step % 3}.ts`] });
    }
  }
}

await Promise.all(Array.from({ length: agents }, (_, i) => agent(i)));
const elapsed = (performance.now() - start) / 1000;
const pct = (s, p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
const ops = {};
for (const op of ["session", "poll", "checkpoint", "publish", "intent", "scope"]) {
  const s = (samples[op] ?? []).sort((a, b) => a - b);
  ops[op] = { count: s.length, perSecond: s.length / elapsed, p50: s.length ? pct(s, 50) : NaN, p99: s.length ? pct(s, 99) : NaN, failures: failures[op] ?? {} };
}
process.stdout.write(JSON.stringify({ elapsed, ops }) + "\n");
process.exit(0);
