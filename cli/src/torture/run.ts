import { fork, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { callOnce, callRetrying, clockFrom, sleep, writeKey, type Recorder } from "./calls.js";
import { checkHistory, type CheckResult } from "./check.js";
import {
  historyText,
  parseHistory,
  type FaultRecord,
  type History,
  type HistoryHeader,
  type OpRecord,
} from "./history.js";
import type { InstanceSpec } from "./instance.js";
import { startStallProxy, type StallProxy } from "./proxy.js";
import type { WorkerSpec } from "./worker.js";

/** A signal to a process this run started; one that has already ended is no error. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

/**
 * `cohent torture`: runs agents against a deployment (its own when no --url is given) while injecting
 * faults, records every operation, then checks the history (check.ts). Every process it starts is
 * stopped by its pid on the way out, whatever happened; its database is dropped.
 */
export interface TortureOptions {
  urls: string[];
  seconds: number;
  agents: number;
  historyFile: string;
  /** The deployment's lease (own instances: the short lease they are started with). */
  leaseSeconds: number;
  /** --url: the largest clock difference between its instances, as far as the user knows. */
  skewMs: number;
  /** The `cohent` bin, to start instances and agent processes with. */
  bin: string;
  /** Working checkpoints claim the agent's path again (by default only scope claims). */
  checkpointClaims: boolean;
  /** Own instances: PostgreSQL to create the run's database on; null: SQLite. */
  postgresUrl: string | null;
  out: (line: string) => void;
}

interface Instance {
  index: number;
  url: string;
  port: number;
  child: ChildProcess;
  spec: InstanceSpec;
}

const TIMEOUT_MS = 5_000;
const BURST = 6;
const OVERLOAD = 240;
const STALL_MS = 4_000;
const RESTART_MS = 3_000;

/** Starts a process and waits, at most 60 s, for `pattern` in its log file. */
async function startLogged(
  args: string[],
  logFile: string,
  pattern: RegExp,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const fd = openSync(logFile, "a");
  const from = fstatSync(fd).size; // a restart appends to the same file: only its own lines count
  const child = spawn(process.execPath, args, { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const m = pattern.exec(readFileSync(logFile).subarray(from).toString());
    if (m) return { child, match: m };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  child.kill("SIGKILL");
  throw new Error(`${args.slice(1, 3).join(" ")} did not start within 60 s; see ${logFile}`);
}

const stopChild = async (child: ChildProcess, graceMs = 10_000) => {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    process.kill(child.pid, "SIGCONT");
    process.kill(child.pid, "SIGTERM");
  } catch {
    return;
  }
  const killer = setTimeout(() => {
    try {
      process.kill(child.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }, graceMs);
  await exited;
  clearTimeout(killer);
};

export async function runTorture(o: TortureOptions): Promise<{ result: CheckResult; history: History }> {
  const runId = randomBytes(4).toString("hex");
  const startedAt = performance.timeOrigin + performance.now();
  const now = clockFrom(startedAt);
  const logDir = `${o.historyFile}.logs`;
  mkdirSync(logDir, { recursive: true });
  const cleanups: (() => Promise<void>)[] = [];
  let cleaning: Promise<void> | null = null;
  /** Stops what the run started, newest first, once (the end of the run, an error, or a signal). */
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const c of cleanups.reverse())
        await c().catch((err) => o.out(`torture: clean-up: ${(err as Error).message}`));
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    o.out(`torture: ${signal}: stopping what it started`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  const ops: OpRecord[] = [];
  const faults: FaultRecord[] = [];
  let n = 0;
  const rec: Recorder = { now, record: (op) => void ops.push(op), nextId: () => `main-${++n}` };
  const own = o.urls.length === 0;
  const baseEnv: NodeJS.ProcessEnv = { ...process.env };
  delete baseEnv.NODE_OPTIONS;

  try {
    // The database: own instances get a fresh one (behind the stall proxy on PostgreSQL).
    let adminUrl: string;
    let serverUrl: string;
    let proxy: StallProxy | null = null;
    let database: "postgres" | "sqlite";
    if (own) {
      if (o.postgresUrl) {
        database = "postgres";
        const name = `cohent_torture_${runId}`;
        const c = new pg.Client({ connectionString: o.postgresUrl, connectionTimeoutMillis: 3_000 });
        await c.connect();
        await c.query(`CREATE DATABASE "${name}"`);
        await c.end();
        cleanups.push(async () => {
          const d = new pg.Client({ connectionString: o.postgresUrl!, connectionTimeoutMillis: 3_000 });
          await d.connect();
          await d.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
          await d.end();
        });
        const direct = new URL(o.postgresUrl);
        direct.pathname = `/${name}`;
        adminUrl = direct.toString();
        proxy = await startStallProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
        cleanups.push(() => proxy!.close());
        const via = new URL(adminUrl);
        via.hostname = "127.0.0.1";
        via.port = String(proxy.port);
        serverUrl = via.toString();
      } else {
        database = "sqlite";
        const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-torture-"));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        adminUrl = serverUrl = `file:${path.join(dir, "cohent.sqlite")}`;
      }
    } else {
      adminUrl = serverUrl = process.env.DATABASE_URL ?? "";
      if (!adminUrl)
        throw new Error(
          "--url needs the deployment's database for its set-up and final read: set DATABASE_URL",
        );
      database = adminUrl.startsWith("file:") ? "sqlite" : "postgres";
    }

    const backend = await import("@cohent/backend");
    await backend.migrate(adminUrl);
    const db = await backend.openDb(adminUrl);
    cleanups.push(() => db.close());
    const deps = {
      store: backend.createStore(db),
      clock: () => new Date(),
      lease: backend.DEFAULT_LEASE,
      log: (await import("pino")).default({ level: "silent" }),
    };

    // The instances.
    const leaseMs = o.leaseSeconds * 1000;
    const silentMs = Math.max(1_000, Math.floor(leaseMs / 2));
    const instances: Instance[] = [];
    const skewMs = own ? (database === "postgres" ? 1_500 : 0) : o.skewMs;
    const startInstance = async (index: number, spec: InstanceSpec): Promise<Instance> => {
      const file = path.join(logDir, `instance-${index}.log`);
      const { child, match } = await startLogged(
        [o.bin, "torture", "--instance", JSON.stringify(spec)],
        file,
        /cohent serving on (http:\/\/127\.0\.0\.1:(\d+))/,
        { ...baseEnv, COHENT_RATE_LIMIT: "off", COHENT_MAX_IN_FLIGHT: "24" },
      );
      return { index, url: match[1]!, port: Number(match[2]), child, spec };
    };
    if (own) {
      const count = database === "postgres" ? 2 : 1;
      const started = await Promise.allSettled(
        Array.from({ length: count }, (_, i) =>
          startInstance(i, { databaseUrl: serverUrl, port: 0, silentMs, leaseMs, skewMs: i * skewMs }),
        ),
      );
      started.forEach((r, i) => {
        if (r.status === "fulfilled") instances[i] = r.value;
        cleanups.push(async () => {
          if (instances[i]) await stopChild(instances[i]!.child);
        });
      });
      const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    }
    const urls = own ? instances.map((i) => i.url) : o.urls.map((u) => u.replace(/\/$/, ""));
    if (skewMs && own)
      faults.push({
        kind: "fault",
        fault: "clock-skew",
        target: urls[1] ?? urls[0]!,
        startAt: 0,
        endAt: 0,
        note: `${skewMs} ms ahead`,
      });

    // The repository, the agents' tokens, and a signed-in person.
    const repo = `torture/run-${runId}`;
    await backend.admin.addRepo(deps, { name: repo, goal: "Survive the torture", caseInsensitive: false });
    const token = async (person: string) => (await backend.admin.issueToken(deps, { repo, person })).token;
    const agentTokens = await Promise.all(Array.from({ length: o.agents }, (_, i) => token(`agent-${i}`)));
    const burstTokens = await Promise.all(Array.from({ length: BURST }, (_, i) => token(`burst-${i}`)));
    const overloadToken = await token("overload");
    const person = await signIn(urls[0]!, await backend.consoleOps.createLoginLink(deps));

    // The agent processes: two, so one can be frozen while the other works.
    const endAt = now() + o.seconds * 1000;
    const paths = Array.from({ length: Math.max(2, Math.ceil(o.agents / 2)) }, (_, i) => `shared/area-${i}`);
    const workerCount = Math.min(2, o.agents);
    const sessions = new Map<string, string>(); // session key → session id
    const workerProcesses: { child: ChildProcess; spec: WorkerSpec; grantedAt: number }[] = [];
    for (let w = 0; w < workerCount; w++) {
      const spec: WorkerSpec = {
        name: `w${w}`,
        runId,
        startedAt,
        endAt,
        instances: urls,
        historyFile: path.join(logDir, `worker-${w}.jsonl`),
        agents: agentTokens.flatMap((t, i) =>
          i % workerCount === w ? [{ name: `w${w}a${i}`, token: t }] : [],
        ),
        paths,
        checkpointClaims: o.checkpointClaims,
        timeoutMs: TIMEOUT_MS,
      };
      writeFileSync(spec.historyFile, "");
      const fd = openSync(path.join(logDir, `worker-${w}.log`), "a");
      const child = fork(o.bin, ["torture", "--worker", JSON.stringify(spec)], {
        stdio: ["ignore", fd, fd, "ipc"],
        env: baseEnv,
        execArgv: [],
      });
      closeSync(fd);
      const entry = { child, spec, grantedAt: -Infinity };
      child.on("message", (m: any) => {
        if (m?.session && m?.sessionId) sessions.set(m.session, m.sessionId);
        if (m?.holds) entry.grantedAt = now();
      });
      workerProcesses.push(entry);
      cleanups.push(() => stopChild(child));
    }

    // The person: pauses a random agent session, then resumes it a moment later.
    const personLoop = (async () => {
      let k = 0;
      while (now() < endAt - 2_000) {
        await sleep(300 + Math.random() * 500);
        const known = [...sessions.entries()];
        if (!known.length) continue;
        const [key, id] = known[Math.floor(Math.random() * known.length)]!;
        for (const kind of ["pause", "resume"] as const) {
          await callRetrying(
            rec,
            urls,
            k++,
            {
              process: "person",
              session: key,
              op: "control",
              method: "POST",
              path: `/api/console/sessions/${id}/control`,
              headers: person,
              body: { kind },
              args: { control: kind },
              timeoutMs: TIMEOUT_MS,
            },
            5,
          );
          if (kind === "pause") await sleep(1_000 + Math.random() * 1_000);
        }
      }
    })();

    // The faults, spread over the run.
    const runFrom = endAt - o.seconds * 1000;
    const startedAtMs = (share: number) => runFrom + share * o.seconds * 1000;
    const at = (share: number) => sleep(startedAtMs(share) - now());
    const faultLoop = (async () => {
      await at(0.1);
      await burst(rec, urls, burstTokens, runId, faults);
      await at(0.2);
      await overload(rec, urls, overloadToken, faults);
      if (own) {
        await at(0.3);
        const victim = instances[instances.length - 1]!;
        const start = now();
        process.kill(victim.child.pid!, "SIGKILL");
        await new Promise<void>((r) =>
          victim.child.exitCode !== null || victim.child.signalCode
            ? r()
            : victim.child.once("exit", () => r()),
        );
        await sleep(2_000);
        const restartAt = now();
        // Asked every 100 ms from the restart on: its recovery is its first ok answer.
        let up = false;
        const probe = (async () => {
          const headers = { authorization: `Bearer ${overloadToken}`, "x-cohent-session": `probe-${runId}` };
          while (!up && now() < restartAt + 60_000) {
            const a = await callOnce(rec, victim.url, {
              process: "probe",
              session: headers["x-cohent-session"],
              op: "kill-switch",
              method: "GET",
              path: "/api/agent/session",
              headers,
              args: {},
              timeoutMs: 1_000,
            });
            if (a.outcome === "ok") up = true;
            else await sleep(100);
          }
        })();
        instances[victim.index] = await startInstance(victim.index, {
          ...victim.spec,
          port: victim.port,
        }).finally(() => void probe);
        await probe;
        faults.push({
          kind: "fault",
          fault: "kill-instance",
          target: victim.url,
          startAt: start,
          endAt: restartAt,
          note: "kill -9, started again 2 s later",
        });
      }
      const stopMs = leaseMs + 5_000;
      if (workerProcesses.length > 1 && startedAtMs(0.45) + stopMs < endAt - 5_000) {
        await at(0.45);
        const w = workerProcesses[1]!;
        // Frozen just after one of its agents was granted a claim (at most 5 s later), so it dies holding one.
        const looking = now();
        while (now() < looking + 5_000 && now() - w.grantedAt > 150) await sleep(20);
        const start = now();
        signal(w.child.pid!, "SIGSTOP");
        await sleep(stopMs);
        // The worker may have ended meanwhile (the run's own stop): nothing to wake, not a crash.
        signal(w.child.pid!, "SIGCONT");
        faults.push({
          kind: "fault",
          fault: "stop-agent",
          target: `agent:${w.spec.agents[0]!.name}`,
          startAt: start,
          endAt: now(),
          note: `SIGSTOP of ${w.spec.agents.map((a) => a.name).join(", ")} for ${stopMs} ms (lease ${leaseMs} ms)`,
        });
      }
      if (proxy) {
        await at(0.78);
        const down = now();
        proxy.drop();
        await sleep(RESTART_MS);
        proxy.resume();
        faults.push({
          kind: "fault",
          fault: "database-restart",
          target: "postgres",
          startAt: down,
          endAt: now(),
          note: `every connection cut, new ones refused for ${RESTART_MS / 1000} s (the proxy; PostgreSQL itself is shared)`,
        });
        await at(0.88);
        const start = now();
        proxy.stall();
        await sleep(STALL_MS);
        proxy.resume();
        faults.push({
          kind: "fault",
          fault: "database-stall",
          target: "postgres",
          startAt: start,
          endAt: now(),
          note: "TCP proxy stops forwarding for 4 s",
        });
      }
    })();

    await faultLoop;
    await personLoop;
    // The agents stop at endAt; a call may still take its timeout and two retries.
    await Promise.all(
      workerProcesses.map(({ child }) =>
        Promise.race([
          new Promise<void>((r) => (child.exitCode !== null ? r() : child.once("exit", () => r()))),
          sleep(endAt - now() + 4 * TIMEOUT_MS + 10_000).then(() => stopChild(child, 1_000)),
        ]),
      ),
    );

    // The final read: every write's marker, counted in the database.
    const prisma = db.prisma as any;
    const marker = `torture ${runId} `;
    const repoRow = await prisma.repository.findFirst({ where: { name: repo } });
    const intents = await prisma.intent.findMany({ where: { repoId: repoRow.id }, select: { prompt: true } });
    const checkpoints = await prisma.checkpoint.findMany({
      where: { intent: { repoId: repoRow.id } },
      select: { summary: true },
    });
    const count = (rows: string[]) => {
      const m: Record<string, number> = {};
      for (const r of rows) if (r.startsWith(marker)) m[r] = (m[r] ?? 0) + 1;
      return m;
    };
    const header: HistoryHeader = {
      kind: "header",
      startedAt,
      leaseMs,
      renewMs: Math.min(15_000, silentMs / 8),
      skewMs,
      staleMs: 3_000,
      // A call given up on (its timeout) may still run while a stalled database holds it, and a moment after.
      lingerMs: TIMEOUT_MS + STALL_MS + 1_000,
      instances: urls,
      database,
    };
    const workerOps = workerProcesses.flatMap(
      ({ spec }) => parseHistory(JSON.stringify(header) + "\n" + readFileSync(spec.historyFile, "utf8")).ops,
    );
    const history: History = {
      header,
      ops: [...ops, ...workerOps].sort((a, b) => a.invokeAt - b.invokeAt),
      faults: faults.sort((a, b) => a.startAt - b.startAt),
      final: {
        kind: "final",
        at: now(),
        checkpoints: count(checkpoints.map((c: { summary: string }) => c.summary)),
        intents: count(intents.map((i: { prompt: string }) => i.prompt)),
      },
    };
    writeFileSync(o.historyFile, historyText(history));
    return { result: checkHistory(history), history };
  } finally {
    await cleanUp();
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
  }
}

/** Redeems a one-time sign-in link: the person's cookie and CSRF token, as headers. */
async function signIn(base: string, token: string): Promise<Record<string, string>> {
  const res = await fetch(`${base}/auth/local?token=${token}`, { redirect: "manual" });
  const cookie = (res.headers.getSetCookie?.() ?? []).map((c) => c.split(";")[0]).join("; ");
  const me = (await (await fetch(`${base}/api/console/me`, { headers: { cookie } })).json()) as any;
  if (!me?.data?.csrfToken)
    throw new Error(`signing the person in failed: ${JSON.stringify(me).slice(0, 200)}`);
  return { cookie, "x-cohent-csrf": me.data.csrfToken };
}

/** Sessions declaring one and the same intent at the same moment, through every instance. */
async function burst(rec: Recorder, urls: string[], tokens: string[], runId: string, faults: FaultRecord[]) {
  const start = rec.now();
  const objective = `Burst ${runId}: the same feature`;
  await Promise.all(
    tokens.map(async (token, i) => {
      const session = `torture-${runId}-burst-${i}`;
      const headers = { authorization: `Bearer ${token}`, "x-cohent-session": session };
      const prompt = `torture ${runId} burst ${i}`;
      const base = {
        process: "burst",
        session,
        method: "POST" as const,
        path: "/api/agent",
        headers,
        timeoutMs: TIMEOUT_MS,
      };
      const p = await callRetrying(rec, urls, i, {
        ...base,
        op: "publish",
        body: { type: "publish", prompt },
        args: { prompt },
        write: writeKey(`burst${i}.p`),
      });
      if (p.outcome !== "ok") return;
      await callRetrying(rec, urls, i, {
        ...base,
        op: "intent",
        body: {
          type: "intent",
          intentId: p.data.intentId,
          intent: { objective, outputs: [`burst-${runId}`] },
        },
        args: { intentId: p.data.intentId, objective },
        write: writeKey(`burst${i}.i`),
      });
    }),
  );
  faults.push({
    kind: "fault",
    fault: "burst",
    target: "all",
    startAt: start,
    endAt: rec.now(),
    note: `${tokens.length} identical intents at once`,
  });
}

/** Many requests at once: past an instance's capacity they are to be refused, retryably. */
async function overload(rec: Recorder, urls: string[], token: string, faults: FaultRecord[]) {
  const start = rec.now();
  const headers = {
    authorization: `Bearer ${token}`,
    "x-cohent-session": `overload-${randomBytes(3).toString("hex")}`,
  };
  await Promise.all(
    Array.from({ length: OVERLOAD }, (_, i) =>
      callOnce(rec, urls[i % urls.length]!, {
        process: "overload",
        session: headers["x-cohent-session"],
        op: "read",
        method: "POST",
        path: "/api/agent",
        headers,
        body: { type: "scopes" },
        args: {},
        timeoutMs: TIMEOUT_MS * 2,
      }),
    ),
  );
  faults.push({
    kind: "fault",
    fault: "overload",
    target: "all",
    startAt: start,
    endAt: rec.now(),
    note: `${OVERLOAD} requests at once`,
  });
}

export function report(r: CheckResult, faults: FaultRecord[], historyFile: string): string {
  const lines: string[] = [];
  lines.push(
    `history: ${historyFile} (${r.stats.ops} operations, ${r.stats.ok} ok, ${r.stats.claims} claims (${r.stats.lostAndTaken} lost and taken), ${r.stats.writes} writes, ${r.stats.pauses} pauses)`,
  );
  lines.push("faults:");
  for (const f of faults) {
    const rec = r.recoveries.find((x) => x.fault === f.fault && x.startAt === f.startAt);
    const recovery =
      rec && f.endAt > f.startAt
        ? rec.recoveryMs === null
          ? ", no recovery"
          : `, recovered ${rec.recoveryMs.toFixed(0)} ms after its end`
        : "";
    lines.push(
      `  ${(f.startAt / 1000).toFixed(1)} s  ${f.fault} (${f.target})${f.note ? `: ${f.note}` : ""}${f.endAt > f.startAt ? `, ${((f.endAt - f.startAt) / 1000).toFixed(1)} s` : ""}${recovery}`,
    );
  }
  lines.push(`anomalies: ${r.anomalies.length === 0 ? "none" : r.anomalies.length}`);
  for (const a of r.anomalies.slice(0, 50)) lines.push(`  ${a.kind}: ${a.message}`);
  if (r.anomalies.length > 50)
    lines.push(`  … and ${r.anomalies.length - 50} more (the history has them all)`);
  return lines.join("\n");
}
