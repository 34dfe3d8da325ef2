import http from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import { IntentRecord } from "@cohent/protocol";
import { resolve, type ResolverIntent } from "../backend/src/core/resolver.js";
import { agentClient, startBackend } from "../test/helpers/backend.js";
import { median, throughput } from "./lib.js";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
const CONCURRENCY = 8;

/** The baseline: a bare Koa JSON endpoint on the same machine, driven by the same client loop. */
async function bareKoa(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { version: 1, ok: true, operation: "bare", data: { cursor: "1", packet: null }, warnings: [], meta: {} };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

export async function benchThroughput(kind: "sqlite" | "postgres") {
  const bare = await bareKoa();
  const backend = await startBackend({ kind });
  try {
    await backend.addRepo("bench/tp");
    const token = await backend.issueToken("bench/tp", "bench");
    const agent = agentClient(backend.url, token, "bench-session");
    const intentId = (await agent.post({ type: "publish", prompt: "bench" })).body.data.intentId as string;
    await agent.post({ type: "intent", intentId, intent: { objective: "Bench", outputs: ["bench-out"] } });
    // Ten peers so that a poll has something to compare against.
    for (let i = 0; i < 10; i++) {
      const peer = agentClient(backend.url, token, `peer-${i}`);
      const id = (await peer.post({ type: "publish", prompt: `peer ${i}` })).body.data.intentId;
      await peer.post({ type: "intent", intentId: id, intent: { objective: `Peer ${i}`, outputs: [`peer-${i}`] } });
    }
    const cursor = (await agent.poll(intentId)).body.data.cursor as string;

    const warm = async (fn: (i: number) => Promise<void>) => throughput(100, CONCURRENCY, fn);
    const barePoll = async () => {
      const r = await fetch(bare.url);
      await r.arrayBuffer();
    };
    const poll = async () => {
      const r = await agent.poll(intentId, cursor);
      if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    };
    const checkpoint = async (i: number) => {
      const r = await agent.post({ type: "checkpoint", intentId, status: "working", summary: `step ${i}` });
      if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    };
    await warm(barePoll);
    const baseline = await throughput(REQUESTS, CONCURRENCY, barePoll);
    await warm(poll);
    const polls = await throughput(REQUESTS, CONCURRENCY, poll);
    await warm(checkpoint);
    const checkpoints = await throughput(REQUESTS, CONCURRENCY, checkpoint);
    return [
      { database: kind, endpoint: "bare Koa JSON (baseline)", "req/s": Math.round(baseline), "ratio to baseline": "1.00" },
      { database: kind, endpoint: "GET /api/agent (empty poll)", "req/s": Math.round(polls), "ratio to baseline": (polls / baseline).toFixed(3) },
      { database: kind, endpoint: "POST checkpoint", "req/s": Math.round(checkpoints), "ratio to baseline": (checkpoints / baseline).toFixed(3) },
    ];
  } finally {
    await backend.stop();
    await bare.close();
  }
}

function syntheticIntents(n: number): ResolverIntent[] {
  const out: ResolverIntent[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      id: `wki_${i.toString(16).padStart(8, "0")}`,
      createdAt: i,
      status: i % 10 === 0 ? "completed" : "active",
      record: IntentRecord.parse({
        objective: `Objective ${i}`,
        components: [`component-${i % 50}`],
        outputs: [`output-${i}`],
        dependsOn: i % 7 === 0 ? [`output-${i - 1}`] : [],
        capabilities: [`cap-${i % 5}`],
      }),
    });
  }
  return out;
}

/** Resolve latency with 100 and 10,000 active intents; the 100 case is the baseline. */
export function benchResolver() {
  const rows: { "active intents": number; "median µs": string; "ratio to 100": string }[] = [];
  let base = 0;
  for (const n of [100, 10_000]) {
    const peers = syntheticIntents(n);
    const me: ResolverIntent = {
      id: "wki_me", createdAt: n + 1, status: "active",
      record: IntentRecord.parse({ objective: "Me", components: ["component-3"], outputs: ["mine"], dependsOn: ["nobody-makes-this"], requires: ["cap-9"], capabilities: [] }),
    };
    const iterations = n === 100 ? 2_000 : 40;
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      resolve(me, peers);
      samples.push((performance.now() - t) * 1000);
    }
    const m = median(samples);
    if (n === 100) base = m;
    rows.push({ "active intents": n, "median µs": m.toFixed(1), "ratio to 100": (m / base).toFixed(1) });
  }
  return rows;
}

/** Median packet sizes over a scripted room of 12 agents on 4 shared outputs. */
export async function benchPacketSizes() {
  const backend = await startBackend({ kind: "sqlite" });
  try {
    await backend.addRepo("bench/packets", "Ship the checkout rewrite without changing the public API");
    const token = await backend.issueToken("bench/packets", "bench", "Codex");
    const publish: number[] = [];
    const intent: number[] = [];
    for (let i = 0; i < 12; i++) {
      const agent = agentClient(backend.url, token, `agent-${i}`);
      const p = await agent.post({ type: "publish", prompt: `Task ${i}: refactor the checkout module part ${i % 4} and update its tests`, clientName: "Codex", model: "gpt-5" });
      publish.push(p.body.data.packet.tokens);
      const r = await agent.post({
        type: "intent",
        intentId: p.body.data.intentId,
        intent: { objective: `Checkout part ${i % 4}`, plan: ["Move validation", "Update tests"], components: ["checkout"], outputs: [`checkout-part-${i}`], dependsOn: i % 3 === 2 ? [`checkout-part-${i - 1}`] : [] },
      });
      intent.push(r.body.data.packet.tokens);
    }
    return [
      { packet: "publish (plan)", "median tokens": median(publish), max: Math.max(...publish) },
      { packet: "intent", "median tokens": median(intent), max: Math.max(...intent) },
    ];
  } finally {
    await backend.stop();
  }
}
