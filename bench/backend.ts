import { IntentRecord } from "@cohent/protocol";
import { resolve, type ResolverIntent } from "../backend/src/core/resolver.js";
import { agentClient, startBackend } from "../test/helpers/backend.js";
import { median } from "./lib.js";

function syntheticIntents(n: number): ResolverIntent[] {
  const out: ResolverIntent[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      id: `wki_${i.toString(16).padStart(8, "0")}`,
      place: i,
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
      id: "wki_me",
      place: n + 1,
      status: "active",
      record: IntentRecord.parse({
        objective: "Me",
        components: ["component-3"],
        outputs: ["mine"],
        dependsOn: ["nobody-makes-this"],
        requires: ["cap-9"],
        capabilities: [],
      }),
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
      const p = await agent.post({
        type: "publish",
        prompt: `Task ${i}: refactor the checkout module part ${i % 4} and update its tests`,
        clientName: "Codex",
        model: "gpt-5",
      });
      publish.push(p.body.data.packet.tokens);
      const r = await agent.post({
        type: "intent",
        intentId: p.body.data.intentId,
        intent: {
          objective: `Checkout part ${i % 4}`,
          plan: ["Move validation", "Update tests"],
          components: ["checkout"],
          outputs: [`checkout-part-${i}`],
          dependsOn: i % 3 === 2 ? [`checkout-part-${i - 1}`] : [],
        },
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

/**
 * Resolve including what it loads, on SQLite, in one transaction through the
 * store, then the pure function. "indexed" is the server's path: the caller's
 * intent and only the candidate peers the IntentName index names. "scan" is
 * the path before the index: every active intent and recent completed work.
 * 100 active intents is the baseline of each.
 */
export async function benchResolveLoaded() {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const path = await import("node:path");
  const { openStore } = await import("../backend/src/store/index.js");
  const { sqliteTime } = await import("../backend/src/store/sql/exec.js");
  const { indexNames, lookupOf } = await import("../backend/src/core/resolver-index.js");
  const { toResolverIntent } = await import("../backend/src/operations/shared/views.js");
  const rows: {
    path: string;
    "active intents": number;
    "peers loaded": number;
    "median ms": string;
    "ratio to 100": string;
  }[] = [];
  const base = new Map<string, number>();
  for (const n of [100, 10_000]) {
    const dir = mkdtempSync(path.join(tmpdir(), "cohent-resolve-"));
    const { db, store } = await openStore(`file:${path.join(dir, "bench.sqlite")}`);
    try {
      const now = new Date();
      const at = sqliteTime(now);
      // Seeded on a connection of its own: the store reads what is committed.
      const { default: Database } = await import("better-sqlite3");
      const side = new Database(path.join(dir, "bench.sqlite"));
      side
        .prepare(`INSERT INTO "Repository" ("id", "name", "createdAt") VALUES ('r', 'bench/resolve', ?)`)
        .run(at);
      side
        .prepare(
          `INSERT INTO "AgentToken" ("id", "repoId", "person", "tokenHash", "createdAt") VALUES ('t', 'r', 'bench', 'h', ?)`,
        )
        .run(at);
      side
        .prepare(
          `INSERT INTO "Session" ("id", "repoId", "tokenId", "key", "createdAt", "lastSeenAt") VALUES ('s', 'r', 't', 'k', ?, ?)`,
        )
        .run(at, at);
      const insert = side.prepare(
        `INSERT INTO "Intent" ("id", "repoId", "sessionId", "person", "prompt", "record", "state", "place", "createdAt", "updatedAt", "closedAt") VALUES (?, 'r', 's', 'bench', 'p', ?, ?, ?, ?, ?, ?)`,
      );
      const name = side.prepare(
        `INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId") VALUES ('r', ?, ?, ?)`,
      );
      let place = 0;
      const add = (id: string, record: IntentRecord, state: string, t: string, closed: string | null) => {
        insert.run(id, JSON.stringify(record), state, ++place, t, t, closed);
        for (const k of indexNames(record)) name.run(k.kind, k.name, id);
      };
      side.transaction(() => {
        for (const peer of syntheticIntents(n)) {
          const t = sqliteTime(new Date(now.getTime() - 1_000_000 + peer.place));
          const done = peer.status === "completed";
          add(peer.id, peer.record!, done ? "completed" : "working", t, done ? t : null);
        }
        add(
          "wki_me",
          IntentRecord.parse({
            objective: "Me",
            components: ["component-3"],
            outputs: ["mine"],
            dependsOn: ["output-5"],
          }),
          "working",
          at,
          null,
        );
        // A caller whose names few peers share, at any room size: what the index scales with.
        add(
          "wki_lone",
          IntentRecord.parse({ objective: "Lone", components: ["lone"], dependsOn: ["output-5"] }),
          "working",
          at,
          null,
        );
      })();
      const cutoff = new Date(now.getTime() - 600_000);
      type T = Parameters<Parameters<typeof store.tx>[0]>[0];
      type Me = NonNullable<Awaited<ReturnType<T["intents"]["get"]>>>;
      const scan = async (t: T) => [
        ...(await t.intents.active("r", cutoff)),
        ...(await t.intents.completed("r", 200)),
      ];
      const indexed = async (t: T, me: Me) => t.intents.candidates("r", lookupOf(me.record!), cutoff);
      const load = [
        { mode: "scan", id: "wki_me", peersOf: scan },
        { mode: "indexed", id: "wki_me", peersOf: indexed },
        { mode: "indexed, few shared names", id: "wki_lone", peersOf: indexed },
      ];
      for (const { mode, id, peersOf } of load) {
        let loaded = 0;
        const once = () =>
          store.tx(async (t) => {
            const me = (await t.intents.get(id))!;
            const others = (await peersOf(t, me)).filter((i) => i.id !== me.id && i.id !== "wki_lone");
            loaded = others.length;
            return resolve(toResolverIntent(me), others.map(toResolverIntent));
          });
        const answer = await once();
        for (let i = 0; i < 2; i++) await once();
        const samples: number[] = [];
        for (let i = 0; i < (n === 100 || mode !== "scan" ? 200 : 10); i++) {
          const t = performance.now();
          await once();
          samples.push(performance.now() - t);
        }
        const m = median(samples);
        if (n === 100) base.set(mode, m);
        rows.push({
          path: `${mode} (${answer.rule})`,
          "active intents": n,
          "peers loaded": loaded,
          "median ms": m.toFixed(2),
          "ratio to 100": (m / base.get(mode)!).toFixed(1),
        });
      }
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows.sort((a, b) => a.path.localeCompare(b.path));
}
