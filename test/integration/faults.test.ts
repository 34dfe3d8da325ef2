import net from "node:net";
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import Database from "better-sqlite3";
import { pollAgent, postAgent, sessionRead } from "../../client/src/service/http.js";
import { agentClient, freshDatabaseUrl, PG_BASE_URL, startBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { BACKSTOP_MS } from "../../backend/src/store/changes.js";
import { serve, stopProcess } from "../helpers/serve.js";
import { claude, hook, intentJson, makeCheckout, run } from "../adapter/helpers.js";

/**
 * Faults: a kill -9 under write load, one of two instances dying behind a
 * balancer, and the database unreachable for a few seconds.
 */

/** A TCP forwarder: round-robin over `targets` (a load balancer), or one target (a path to the database) that can be cut and restored. */
function forwarder(targets: () => number[], port = 0) {
  const sockets = new Set<net.Socket>();
  const routed = new Map<number, number>();
  let turn = 0;
  let next: number | null = null;
  let server: net.Server;
  const start = () =>
    new Promise<number>((resolve) => {
      server = net.createServer((client) => {
        const list = targets();
        const target = next ?? list[turn++ % list.length]!;
        next = null;
        routed.set(target, (routed.get(target) ?? 0) + 1);
        const upstream = net.connect(target, "127.0.0.1");
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, "127.0.0.1", () => resolve((port = (server.address() as net.AddressInfo).port)));
    });
  return {
    start,
    routed,
    /** The next connection goes to `port`. */
    preferNext: (port: number) => (next = port),
    /** Cuts every open connection, as a balancer does when a backend dies. */
    dropAll: () => {
      for (const s of sockets) s.destroy();
    },
    get port() {
      return port;
    },
    /** Cuts every open connection and refuses new ones. */
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.each(DATABASE_KINDS)("faults (%s)", (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  /** A database with a repository and tokens, set up in-process; then served by `cohent serve` processes. */
  async function prepared(tokens: number) {
    const setup = await startBackend({ kind });
    await setup.addRepo("acme/faults");
    const issued = await Promise.all(
      Array.from({ length: tokens }, (_, i) => setup.issueToken("acme/faults", `w${i}`)),
    );
    const url = setup.deps.db.url;
    await setup.close();
    cleanups.push(async () => {
      const again = await startBackend({ databaseUrl: url });
      await again.stop();
    });
    return { url, tokens: issued };
  }

  it(
    "kill -9 under write load: every acknowledged write is stored, cursors continue with no gap and no repeat",
    { timeout: 180_000 },
    async () => {
      const { url, tokens } = await prepared(8);
      let server = await serve(url, { COHENT_RATE_LIMIT: "off" });
      const clients = tokens.map((t, i) => agentClient(server.url, t, `kill-${i}`));
      const intents = await Promise.all(
        clients.map(
          async (c, i) =>
            (await c.post({ type: "publish", prompt: `writer ${i}` })).body.data.intentId as string,
        ),
      );
      const acked: string[] = [];
      const seqsSeen: number[] = [];
      let killed = false;
      const writers = clients.map(async (c, i) => {
        for (let n = 0; !killed; n++) {
          const summary = `w${i}-${n}`;
          try {
            const r = await c.post({ type: "checkpoint", intentId: intents[i], status: "working", summary });
            if (r.status === 200) {
              acked.push(summary);
              if (r.body.data.cursor) seqsSeen.push(Number(r.body.data.cursor));
            }
          } catch {
            return; // the connection died with the process
          }
        }
      });
      // A reader follows the change log with its cursor across the crash.
      const reader = agentClient(server.url, tokens[0]!, "kill-0");
      await new Promise((r) => setTimeout(r, 1_500));
      const before = await reader.poll(intents[0]!, "0");
      const cursorBefore = before.body.data.cursor as string;
      server.child.kill("SIGKILL");
      killed = true;
      await Promise.all(writers);
      await stopProcess(server.child, "SIGKILL");

      server = await serve(url, { COHENT_RATE_LIMIT: "off" });
      cleanups.push(() => stopProcess(server.child));
      const check = await startBackend({ databaseUrl: url });
      try {
        const stored = new Set(
          (await check.deps.db.prisma.checkpoint.findMany({ select: { summary: true } })).map(
            (c) => c.summary,
          ),
        );
        const lost = acked.filter((s) => !stored.has(s));
        const events = (
          await check.deps.db.prisma.event.findMany({ orderBy: { seq: "asc" }, select: { seq: true } })
        ).map((e) => e.seq);
        // Cursor continuity: the reader resumes from its pre-crash cursor on the new process.
        const resumed = agentClient(server.url, tokens[0]!, "kill-0");
        const after = await resumed.poll(intents[0]!, cursorBefore);
        expect(after.status).toBe(200);
        expect(Number(after.body.data.cursor)).toBeGreaterThanOrEqual(Number(cursorBefore));
        const next = await resumed.post({
          type: "checkpoint",
          intentId: intents[0],
          status: "working",
          summary: "after restart",
        });
        expect(next.status).toBe(200);
        const newSeq = (
          await check.deps.db.prisma.event.findFirstOrThrow({
            where: { summary: { contains: "after restart" } },
            select: { seq: true },
          })
        ).seq;
        console.log(
          `kill -9 (${kind}): ${acked.length} writes acknowledged before the kill, ${lost.length} lost; ${events.length} events, unique and increasing; the first write after restart has seq ${newSeq} > ${Math.max(...events)}? ${newSeq > Math.max(...events, 0)}`,
        );
        expect(acked.length).toBeGreaterThan(10);
        expect(lost).toEqual([]);
        expect(new Set(events).size).toBe(events.length);
        expect(newSeq).toBeGreaterThan(Math.max(...events.filter((s) => s !== newSeq), 0));
        for (const s of seqsSeen) expect(events).toContain(s);
      } finally {
        await check.close();
      }
    },
  );

  it(
    "one of two instances dies: agents on the other keep working, and the adapter resends a refused call once",
    { timeout: 120_000 },
    async () => {
      const { url, tokens } = await prepared(2);
      const one = await serve(url);
      const two = await serve(url);
      cleanups.push(() => stopProcess(two.child));
      const alive = new Set([Number(new URL(one.url).port), Number(new URL(two.url).port)]);
      const balancer = forwarder(() => [...alive]);
      await balancer.start();
      cleanups.push(() => balancer.stop());
      const service = `http://127.0.0.1:${balancer.port}`;
      const connection = { service, token: tokens[0]!, session: "lb-agent", timeoutMs: 5_000 };
      const published = await postAgent(connection, { type: "publish", prompt: "behind a balancer" });
      expect(published.ok).toBe(true);
      const intentId = (published as any).data.intentId as string;

      one.child.kill("SIGKILL");
      await stopProcess(one.child, "SIGKILL");
      const deadPort = Number(new URL(one.url).port);
      const toDeadBefore = balancer.routed.get(deadPort) ?? 0;
      // The adapter keeps its connection alive: the balancer drops it, and its next connection is sent to the dead instance.
      // Its health check then takes the dead one out of rotation; the resend goes to the live one.
      balancer.dropAll();
      await new Promise((r) => setTimeout(r, 200)); // the reset reaches the client before its next call
      balancer.preferNext(deadPort);
      alive.delete(deadPort);
      const results: boolean[] = [];
      for (let i = 0; i < 20; i++) {
        const read = await sessionRead(connection);
        const polled = await pollAgent(connection, intentId, "0");
        const wrote = await postAgent(connection, {
          type: "checkpoint",
          intentId,
          status: "working",
          summary: `step ${i}`,
        });
        results.push(read.ok, polled.ok, wrote.ok);
        for (const e of [read, polled, wrote])
          if (!e.ok) console.log(`failed: ${i} ${e.operation} ${e.error.code} ${e.error.message}`);
      }
      const direct = agentClient(two.url, tokens[1]!, "direct");
      expect((await direct.post({ type: "publish", prompt: "still here" })).status).toBe(200);
      const toDead = (balancer.routed.get(deadPort) ?? 0) - toDeadBefore;
      console.log(
        `instance death (${kind}): ${results.filter(Boolean).length} of ${results.length} adapter calls through the balancer succeeded after one of two instances died; ${toDead} connections reached the dead one and were resent`,
      );
      expect(toDead).toBeGreaterThan(0);
      expect(results.every(Boolean)).toBe(true);
    },
  );

  it.skipIf(kind !== "sqlite")(
    "SQLite write-locked by another process: 503 DATABASE_UNAVAILABLE, nothing half-written, recovery without a restart",
    { timeout: 120_000 },
    async () => {
      const backend = await startBackend({ kind: "sqlite" });
      cleanups.push(() => backend.stop());
      await backend.addRepo("acme/locked");
      const token = await backend.issueToken("acme/locked", "ann");
      const agent = agentClient(backend.url, token, "locked");
      const intentId = (await agent.post({ type: "publish", prompt: "before" })).body.data.intentId;
      const before = await backend.deps.db.prisma.event.count();
      // Another process's connection holds the write lock (the server waits at most its busy timeout).
      const other = new Database(backend.deps.db.url.slice("file:".length), { timeout: 0 });
      other.exec("BEGIN IMMEDIATE");
      const started = Date.now();
      const during = await agent.post({ type: "checkpoint", intentId, status: "working", summary: "during" });
      const waited = Date.now() - started;
      other.exec("ROLLBACK");
      other.close();
      expect([during.status, during.body.error?.code, during.body.error?.retryable]).toEqual([
        503,
        "DATABASE_UNAVAILABLE",
        true,
      ]);
      expect(await backend.deps.db.prisma.event.count()).toBe(before);
      const after = await agent.post({ type: "checkpoint", intentId, status: "working", summary: "after" });
      expect(after.status).toBe(200);
      console.log(
        `database locked (sqlite): answered 503 DATABASE_UNAVAILABLE after ${waited} ms; nothing half-written; the next call succeeded`,
      );
    },
  );

  it.skipIf(kind !== "sqlite")(
    "SQLite write-locked briefly by another process: the write waits the lock out and succeeds",
    { timeout: 60_000 },
    async () => {
      const backend = await startBackend({ kind: "sqlite" });
      cleanups.push(() => backend.stop());
      await backend.addRepo("acme/brief");
      const token = await backend.issueToken("acme/brief", "ann");
      const agent = agentClient(backend.url, token, "brief");
      const intentId = (await agent.post({ type: "publish", prompt: "before" })).body.data.intentId;
      // A separate process holds the write lock for 400 ms (this test's event loop is the server's).
      const holder = spawn(
        process.execPath,
        [
          "-e",
          `const D = require("better-sqlite3"); const d = new D(process.argv[1], { timeout: 0 }); d.exec("BEGIN IMMEDIATE"); console.log("locked"); setTimeout(() => { d.exec("ROLLBACK"); d.close(); }, 400);`,
          backend.deps.db.url.slice("file:".length),
        ],
        { cwd: path.resolve("backend"), stdio: ["ignore", "pipe", "inherit"] },
      );
      await new Promise((r) => holder.stdout!.once("data", r));
      const started = Date.now();
      const during = await agent.post({ type: "checkpoint", intentId, status: "working", summary: "waited" });
      const waited = Date.now() - started;
      await new Promise((r) => (holder.exitCode === null ? holder.once("exit", r) : r(null)));
      expect(during.status).toBe(200);
      expect(waited).toBeGreaterThanOrEqual(200);
      console.log(`database locked 400 ms (sqlite): the checkpoint waited ${waited} ms and succeeded`);
    },
  );

  it.skipIf(kind !== "postgres" || !PG_BASE_URL)(
    "the database unreachable for a few seconds: 503 DATABASE_UNAVAILABLE, nothing half-written, recovery without a restart",
    { timeout: 120_000 },
    async () => {
      const db = await freshDatabaseUrl("postgres");
      cleanups.push(db.drop);
      const direct = new URL(db.url);
      const path = forwarder(() => [Number(direct.port || 5432)]);
      await path.start();
      const viaProxy = new URL(db.url);
      viaProxy.port = String(path.port);
      const backend = await startBackend({ databaseUrl: viaProxy.toString() });
      cleanups.push(() => backend.close());
      await backend.addRepo("acme/outage");
      const token = await backend.issueToken("acme/outage", "ann");
      const agent = agentClient(backend.url, token, "outage");
      const intentId = (await agent.post({ type: "publish", prompt: "before" })).body.data.intentId;
      const count = async (table: "intent" | "event" | "checkpoint") => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        const n = Number(
          (await c.query(`SELECT count(*) AS n FROM "${table[0]!.toUpperCase()}${table.slice(1)}"`)).rows[0]
            .n,
        );
        await c.end();
        return n;
      };
      const before = {
        intents: await count("intent"),
        events: await count("event"),
        checkpoints: await count("checkpoint"),
      };

      await path.stop();
      const outageStart = Date.now();
      const answers = [];
      for (const call of [
        () => agent.post({ type: "publish", prompt: "during" }),
        () =>
          agent.post({
            type: "checkpoint",
            intentId,
            status: "working",
            summary: "during",
            paths: ["x/y.ts"],
          }),
        () => agent.poll(intentId, "0"),
      ]) {
        answers.push(await call());
      }
      const ready = await fetch(`${backend.url}/readyz`);
      const readyBody = (await ready.json()) as any;
      const health = await fetch(`${backend.url}/healthz`);
      for (const a of answers) {
        expect([a.status, a.body.error?.code, a.body.error?.retryable]).toEqual([
          503,
          "DATABASE_UNAVAILABLE",
          true,
        ]);
      }
      expect([ready.status, readyBody.error.code]).toEqual([503, "DATABASE_UNAVAILABLE"]);
      expect(health.status).toBe(200);
      const outageMs = Date.now() - outageStart;

      await new Promise((r) => setTimeout(r, 1_000));
      const restored = forwarder(() => [Number(direct.port || 5432)], path.port);
      await restored.start();
      cleanups.push(() => restored.stop());
      expect(await count("intent")).toBe(before.intents);
      expect(await count("event")).toBe(before.events);
      expect(await count("checkpoint")).toBe(before.checkpoints);
      const recoveredAt = Date.now();
      let again = await agent.post({ type: "checkpoint", intentId, status: "working", summary: "after" });
      while (again.status !== 200 && Date.now() - recoveredAt < 15_000) {
        await new Promise((r) => setTimeout(r, 200));
        again = await agent.post({ type: "checkpoint", intentId, status: "working", summary: "after" });
      }
      expect(again.status).toBe(200);
      expect((await fetch(`${backend.url}/readyz`)).status).toBe(200);
      console.log(
        `database outage (${kind}): ${answers.length} calls and /readyz answered 503 DATABASE_UNAVAILABLE within ${outageMs} ms; nothing half-written; recovered ${Date.now() - recoveredAt} ms after the path returned, no restart`,
      );
    },
  );

  it.skipIf(kind !== "postgres" || !PG_BASE_URL)(
    "the database unreachable: the real hook denies edits with the reason, and lets them through again once it returns",
    { timeout: 120_000 },
    async () => {
      const db = await freshDatabaseUrl("postgres");
      cleanups.push(db.drop);
      const direct = Number(new URL(db.url).port || 5432);
      const path = forwarder(() => [direct]);
      await path.start();
      const viaProxy = new URL(db.url);
      viaProxy.port = String(path.port);
      const backend = await startBackend({ databaseUrl: viaProxy.toString() });
      cleanups.push(() => backend.close());
      await backend.addRepo("acme/outage-hook");
      const token = await backend.issueToken("acme/outage-hook", "ann");
      const co = await makeCheckout(backend.url, "acme/outage-hook");
      const env = { ...claude.env, COHENT_AGENT_TOKEN: token };
      const S = "outage-hook";
      await hook(co, claude.prompt(S, co.root, "Rework the billing module"), env);
      const declared = await run(
        co,
        ["intent", intentJson({ objective: "rework billing", components: ["billing"] })],
        { env: { ...env, COHENT_SESSION: S } },
      );
      expect(declared.code, declared.stderr).toBe(0);
      const write = (file: string) => hook(co, claude.write(S, co.root, `${co.root}/${file}`), env);
      expect((await write("src/billing/a.ts")).denied).toBeNull();

      await path.stop();
      // A new target needs a claim (a write the database must take); the claimed one needs the kill-switch read.
      const newTarget = await write("src/billing/b.ts");
      expect(newTarget.denied).toMatch(/DATABASE_UNAVAILABLE/);
      // An edit inside its own claim rides on the kill-switch read, which memory answers until the
      // change cache's backstop (BACKSTOP_MS) says anything may have changed: after that it is denied too.
      await new Promise((r) => setTimeout(r, BACKSTOP_MS + 500));
      const claimed = await write("src/billing/a.ts");
      expect(claimed.denied, `${claimed.code} ${claimed.stdout} ${claimed.stderr}`).toMatch(
        /DATABASE_UNAVAILABLE|unreachable/,
      );
      const outage = [newTarget, claimed];
      const restored = forwarder(() => [direct], path.port);
      await restored.start();
      cleanups.push(() => restored.stop());
      let after = await write("src/billing/b.ts");
      for (let i = 0; after.denied && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 300));
        after = await write("src/billing/b.ts");
      }
      expect(after.denied).toBeNull();
      console.log(
        `database outage, real hook: ${outage.length} edits denied (a new target, then its own claimed path after the ${BACKSTOP_MS} ms backstop), e.g. "${claimed.denied!.slice(0, 120)}"; allowed again after recovery`,
      );
    },
  );
});
