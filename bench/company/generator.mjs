// One generator process of `npm run bench:company`: a slice of the company's agents, each with its own
// session, over keep-alive connections (node:http, one Agent per instance). Spec (a JSON file, argv[2]:
// thousands of tokens are past the limit of one argument):
// { id, targets, agents: [{ token, key, target }], seconds, setupSeconds, setupConcurrency, readMs,
//   writeMs, waitSeconds, timeoutMs, pause: null | { console, cookie, csrf, everyMs, timeoutMs } }.
//
// Setup (not measured): every agent publishes and declares its intent, a few at a time, and opens its
// long-poll. Then it prints {"ready": …} and waits for "go" on stdin: the run starts every generator's
// window together, and reads the processes' CPU around it. In the window each agent keeps its long-poll open (x-cohent-wait),
// reads its kill switch (GET /api/agent/session) every ~readMs and checkpoints every ~writeMs, jittered
// ±20 %, and skips its checkpoints while it knows it is paused, as a guarded agent would.
// With `pause` (one generator): every ~everyMs a person pauses one of this slice's agents on the
// second instance through the first instance's console API, while the agent's long-poll is open on the
// second; the wake is the time from the pause request's start to that long-poll's answer saying
// "paused"; then the person resumes it. At the window's end open long-polls are closed, not counted.
// Prints the samples (ms) and counts as JSON, last line.
import { readFileSync } from "node:fs";
import http from "node:http";
import { createInterface } from "node:readline";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { seconds, readMs, writeMs, waitSeconds, timeoutMs } = spec;
const agents = new Map(
  spec.targets.map((t) => [t, new http.Agent({ keepAlive: true, maxSockets: Infinity })]),
);

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const jitter = (ms) => ms * (0.8 + 0.4 * Math.random());

/** One request on a keep-alive connection; resolves { status, body } or rejects (timeout, connection). */
function request(base, path, { method = "GET", headers = {}, body, timeout = timeoutMs, signal } = {}) {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent: agents.get(base),
        headers: { ...headers, ...(data ? { "content-type": "application/json" } : {}) },
        signal,
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          let json = null;
          try {
            json = JSON.parse(text);
          } catch {
            /* not JSON: the status says enough */
          }
          resolve({ status: res.statusCode, body: json, headers: res.headers });
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(timeout, () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", reject);
    req.end(data);
  });
}

let phase = "setup";
const window = { reads: [], writes: [], polls: 0, pauseCalls: [], wakes: [], answered: 0 };
const misses = {};
const notes = {};
const count = (m, key) => (m[key] = (m[key] ?? 0) + 1);

/** An agent call: its answer's data, or null (a miss, counted by cause, in the window only). */
async function call(a, op, path, opts = {}) {
  const t = performance.now();
  try {
    const res = await request(spec.targets[a.target], path, {
      ...opts,
      headers: { authorization: `Bearer ${a.token}`, "x-cohent-session": a.key, ...opts.headers },
    });
    const ms = performance.now() - t;
    if (phase === "window" && !a.closing) window.answered++;
    const control = res.body?.meta?.session?.control;
    if (res.status === 200 && res.body?.ok) {
      if (control) a.control = control;
      if (phase === "window") {
        if (op === "read") window.reads.push(ms);
        else if (op === "write") window.writes.push(ms);
      }
      return res.body;
    }
    const code = res.body?.error?.code ?? `HTTP ${res.status}`;
    // A checkpoint sent before the agent learnt of its pause: an answer, not a miss.
    if (code === "SESSION_PAUSED") count(notes, `${op} refused while paused`);
    else if (phase === "window") count(misses, `${op} ${code}`);
    else count(misses, `setup ${op} ${code}`);
    return null;
  } catch (err) {
    if (a.closing || err?.name === "AbortError") return null;
    count(misses, `${phase === "window" ? "" : "setup "}${op} ${err?.code ?? err?.name ?? "error"}`);
    return null;
  }
}

/**
 * The agent's long-poll, always one open from its setup on (they open at the setup's pace, not all at the
 * window's start); at a change it asks again from the new cursor. Until the window's end.
 */
async function longPolls(a) {
  let first = true;
  while (performance.now() < end) {
    // Agents hold theirs out of step: the first one holds a random part of a whole wait.
    const wait = first ? 1 + Math.floor(Math.random() * waitSeconds) : waitSeconds;
    first = false;
    a.poll = { sentAt: performance.now(), until: performance.now() + wait * 1000 };
    const res = await call(a, "poll", "/api/agent", {
      headers: { "x-cohent-intent": a.intentId, "x-cohent-cursor": a.cursor, "x-cohent-wait": String(wait) },
      timeout: (wait + 30) * 1000,
      signal: a.abort.signal,
    });
    const sent = a.poll.sentAt;
    a.poll = null;
    if (res && phase === "window") window.polls++;
    if (res?.data?.cursor) a.cursor = res.data.cursor;
    a.onPoll?.(res, sent);
    if (!res) await sleep(1000);
  }
}

let end = Infinity;

async function setup(a) {
  const pub = await call(a, "publish", "/api/agent", {
    method: "POST",
    body: { type: "publish", prompt: `${a.key}: keep the module tidy`, paths: [`src/${a.key}`] },
  });
  if (!pub) return;
  a.sessionId = pub.meta?.session?.id;
  a.intentId = pub.data.intentId;
  const decided = await call(a, "intent", "/api/agent", {
    method: "POST",
    body: {
      type: "intent",
      intentId: a.intentId,
      intent: {
        objective: `Keep ${a.key}'s module tidy`,
        plan: ["Edit the module", "Run its tests"],
        components: [`module-${a.key}`],
        outputs: [`${a.key}-tidy`],
      },
    },
  });
  a.cursor = decided?.data?.packet?.cursor ?? pub.data?.packet?.cursor ?? "0";
  a.ready = !!decided;
  if (!a.ready) return;
  a.control = "active";
  a.abort = new AbortController();
  a.polling = longPolls(a);
}

const setupStart = performance.now();
const setupDeadline = setupStart + spec.setupSeconds * 1000;
{
  const queue = [...spec.agents];
  await Promise.race([
    Promise.all(
      Array.from({ length: spec.setupConcurrency }, async () => {
        while (queue.length && performance.now() < setupDeadline) await setup(queue.shift());
      }),
    ),
    sleep(spec.setupSeconds * 1000),
  ]);
}
const ready = spec.agents.filter((a) => a.ready);
process.stdout.write(
  JSON.stringify({ ready: ready.length, of: spec.agents.length, setupMs: performance.now() - setupStart }) +
    "\n",
);

// Wait for the window's start ("go"), bounded.
await new Promise((resolve) => {
  const rl = createInterface({ input: process.stdin });
  rl.on("line", (line) => line.trim() === "go" && resolve());
  setTimeout(resolve, (spec.setupSeconds + 120) * 1000);
});
phase = "window";
const start = performance.now();
end = start + seconds * 1000;

async function reads(a) {
  await sleep(Math.random() * readMs);
  while (performance.now() < end) {
    await call(a, "read", "/api/agent/session");
    await sleep(Math.min(jitter(readMs), end - performance.now()));
  }
}

async function writes(a) {
  await sleep(Math.random() * writeMs);
  let step = 0;
  while (performance.now() < end) {
    if (a.control === "active")
      await call(a, "write", "/api/agent", {
        method: "POST",
        body: { type: "checkpoint", intentId: a.intentId, status: "working", summary: `step ${++step}` },
      });
    await sleep(Math.min(jitter(writeMs), end - performance.now()));
  }
}

/** A person's command through the first instance's console API; its answer's time. */
async function control(a, kind) {
  const t = performance.now();
  try {
    const res = await request(spec.pause.console, `/api/console/sessions/${a.sessionId}/control`, {
      method: "POST",
      headers: { cookie: spec.pause.cookie, "x-cohent-csrf": spec.pause.csrf },
      body: { kind, reason: "bench:company pause" },
    });
    if (res.status !== 200 || !res.body?.ok) count(misses, `${kind} ${res.body?.error?.code ?? res.status}`);
    else window.pauseCalls.push(performance.now() - t);
    return res.status === 200;
  } catch (err) {
    count(misses, `${kind} ${err?.code ?? "error"}`);
    return false;
  }
}

/** Pauses one agent at a time whose long-poll on the second instance is open with ≥ 5 s left to wait. */
async function pauses() {
  const { everyMs, timeoutMs: bound } = spec.pause;
  const mine = ready.filter((a) => a.target === 1 && a.sessionId);
  await sleep(2000);
  while (performance.now() < end - 3000) {
    const now = performance.now();
    const open = mine.filter((a) => a.control === "active" && a.poll && a.poll.until - now > 5000);
    const a = open[Math.floor(Math.random() * open.length)];
    if (!a) {
      count(notes, "pause: no open long-poll to pause");
      await sleep(500);
      continue;
    }
    const t0 = performance.now();
    const woke = new Promise((resolve) => {
      a.onPoll = (res, sentAt) => {
        if (sentAt > t0) return; // a long-poll opened after the pause says nothing of the wake
        a.onPoll = null;
        resolve(
          res?.data?.control === "paused" || res?.meta?.session?.control === "paused" ? "woke" : "raced",
        );
      };
    });
    if (!(await control(a, "pause"))) {
      a.onPoll = null;
      await sleep(everyMs);
      continue;
    }
    const how = await Promise.race([woke, sleep(bound).then(() => "timeout")]);
    if (how === "woke") window.wakes.push(performance.now() - t0);
    else if (a.closing) count(notes, "pause: cut by the window's end");
    else if (how === "raced") count(notes, "pause: long-poll ended before the pause reached it");
    else count(misses, `pause not woken in ${bound / 1000} s`);
    a.onPoll = null;
    await control(a, "resume");
    a.control = "active";
    await sleep(jitter(everyMs));
  }
}

const runs = ready.flatMap((a) => [a.polling, reads(a), writes(a)]);
if (spec.pause) runs.push(pauses());
// The window's end: open long-polls are closed (not counted); reads and writes under way finish (bounded by timeoutMs).
setTimeout(() => {
  for (const a of ready) {
    a.closing = true;
    a.abort.abort();
  }
}, seconds * 1000);
await Promise.race([Promise.all(runs), sleep(seconds * 1000 + timeoutMs + 5000)]);
const elapsed = (performance.now() - start) / 1000;
// Samples to a tenth of a millisecond; exit once the line is written (megabytes: an exit right after
// write() cut it short in the pipe).
const tenth = (xs) => xs.map((x) => Math.round(x * 10) / 10);
const result = { elapsed, ...window, misses, notes };
for (const k of ["reads", "writes", "pauseCalls", "wakes"]) result[k] = tenth(result[k]);
process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
