import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/**
 * Processes of the load benchmark. The server is reached only through its
 * public surface: the `cohent` bin (serve, repo add, token issue) and HTTP.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "../..");
/** BENCH_COHENT_ROOT: another checkout whose server to measure (an A/B against an earlier commit, in the same run's conditions). */
const SERVER_ROOT = process.env.BENCH_COHENT_ROOT ? path.resolve(process.env.BENCH_COHENT_ROOT) : ROOT;
// The bin moved from backend/ to cli/; an earlier checkout may still have it in backend/.
const COHENT = [
  path.join(SERVER_ROOT, "cli/bin/cohent.mjs"),
  path.join(SERVER_ROOT, "backend/bin/cohent.mjs"),
].find((f) => existsSync(f))!;

export interface Db {
  kind: "sqlite" | "postgres";
  /** Environment and flags every `cohent` call of this database takes. */
  env: Record<string, string>;
  args: string[];
  drop(): Promise<void>;
}

export const PG_BASE_URL =
  process.env.BENCH_PG_URL ??
  process.env.COHENT_TEST_DATABASE_URL ??
  "postgresql://postgres@127.0.0.1:5432/postgres";

export function sqliteDb(): Db {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-bench-"));
  return {
    kind: "sqlite",
    env: {},
    args: ["--data-dir", dir],
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A fresh PostgreSQL database on the local server, dropped afterwards; null when none answers. */
export async function postgresDb(): Promise<Db | null> {
  const name = `cohent_bench_${randomBytes(5).toString("hex")}`;
  const client = new pg.Client({ connectionString: PG_BASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE "${name}"`);
  } catch (err) {
    process.stderr.write(
      `bench:load: PostgreSQL at ${PG_BASE_URL} unusable (${(err as Error).message}); skipping it\n`,
    );
    return null;
  } finally {
    await client.end().catch(() => {});
  }
  const url = new URL(PG_BASE_URL);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    env: { DATABASE_URL: url.toString() },
    args: [],
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_BASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

function childEnv(db: Db, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...db.env, ...extra };
  // The benchmark drives one token far past the per-token rate limit on purpose.
  env.COHENT_RATE_LIMIT ??= "off";
  // A SQLite run must not pick up a DATABASE_URL from the caller's shell.
  if (db.kind === "sqlite") delete env.DATABASE_URL;
  delete env.NODE_OPTIONS;
  return env;
}

/** Runs `cohent <args…>` on this database; resolves to its stdout. */
export function cohent(db: Db, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [COHENT, ...args, ...db.args],
      // A set-up file's answer is a line per item (`--file`): thousands of tokens.
      { env: childEnv(db), cwd: SERVER_ROOT, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`cohent ${args.join(" ")} failed: ${stderr || err.message}`));
        else resolve(stdout.trim());
      },
    );
  });
}

export interface Proc {
  url: string;
  pid: number;
  /** The file its output goes to. */
  log: string;
  stop(): Promise<void>;
}

/** BENCH_SERVER_LOG_DIR: where each server's output goes, `<what>-<pid>.log` (a warning such as "database unavailable" says why a request failed). */
const LOG_DIR = process.env.BENCH_SERVER_LOG_DIR ?? path.join(os.tmpdir(), "cohent-bench-logs");

/**
 * Spawns a server process and waits for the line announcing its URL (on stdout or stderr); its output then goes
 * to its log file. `direct`: the server writes that file itself (no pipe through this process, which then
 * reads the file for the line): for loads whose access log is large.
 */
function spawnServer(
  args: string[],
  env: NodeJS.ProcessEnv,
  pattern: RegExp,
  what: string,
  direct = false,
): Promise<Proc> {
  mkdirSync(LOG_DIR, { recursive: true });
  const name = (id: string | number | undefined) =>
    path.join(LOG_DIR, `${what.replace(/\W+/g, "-")}-${id}.log`);
  // A direct log is named before its process exists: by this process's pid and a random part.
  const directFile = direct ? name(`${process.pid}-${randomBytes(3).toString("hex")}`) : null;
  const fd = directFile ? openSync(directFile, "a") : null;
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: fd === null ? ["ignore", "pipe", "pipe"] : ["ignore", fd, fd],
  });
  if (fd !== null) closeSync(fd);
  const file = directFile ?? name(child.pid);
  let tail = "";
  let started = false;
  const log = direct ? null : createWriteStream(file);
  child.once("exit", () => log?.end());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${what} did not start within 60 s:\n${tail}`)), 60_000);
    const fail = (err: Error) => {
      if (started) return;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      // Keep draining both pipes for the whole run (a full pipe would stall the server's logger), into
      // the server's log file: this process shares the machine with the one it measures, so no parsing.
      log?.write(chunk);
      if (started) return;
      tail = (tail + chunk.toString()).slice(-4000);
      const m = pattern.exec(tail);
      if (m && !started) {
        started = true;
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          log: file,
          pid: child.pid!,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
              child.once("exit", () => {
                clearTimeout(kill);
                done();
              });
              child.kill("SIGTERM");
            }),
        });
      }
    };
    if (direct) {
      // The file holds the output; read it until the line is there (the start's 60 s bound stands).
      const look = setInterval(() => {
        if (started) return clearInterval(look);
        tail = "";
        onData(readFileSync(file).subarray(-4000));
      }, 100);
      child.once("exit", () => clearInterval(look));
    } else {
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
    }
    child.once("exit", (code) => fail(new Error(`${what} exited with ${code}:\n${tail}`)));
  });
}

/**
 * `cohent serve --port 0` on this database, in its own process. `nodeFlags`
 * go to that node process itself (the bin registers tsx in-process, so
 * `--cpu-prof` profiles the server; Node 20 refuses it in NODE_OPTIONS).
 */
export function startCohent(db: Db, nodeFlags: string[] = [], direct = false): Promise<Proc> {
  const env = childEnv(db, { COHENT_HOST: "127.0.0.1" });
  return spawnServer(
    [...nodeFlags, COHENT, "serve", "--port", "0", "--host", "127.0.0.1", ...db.args],
    env,
    /cohent serving on (http:\/\/127\.0\.0\.1:\d+)/,
    "cohent serve",
    direct,
  );
}

/** The bare Koa JSON endpoint, in its own process. */
export function startBareKoa(): Promise<Proc> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnServer(
    [path.join(here, "bare-koa.mjs")],
    env,
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    "bare Koa",
  );
}

const CLK_TCK = 100; // Linux USER_HZ; /proc/<pid>/stat counts CPU time in these ticks.

/** CPU time (user + system) a process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** Runs a Node script in its own process and parses the JSON it prints last. */
export function runJson<T>(script: string, arg: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    execFile(
      process.execPath,
      [path.join(here, script), JSON.stringify(arg)],
      { env, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${script} failed: ${stderr || err.message}`));
        const last = stdout.trim().split("\n").pop() ?? "";
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`${script} printed no JSON: ${stdout.slice(-500)} ${stderr.slice(-500)}`));
        }
      },
    );
  });
}

export interface CannonResult {
  total: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface CannonSpec {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  duration?: number;
}

/** One autocannon run from a separate process, with the CPU the given server pids used meanwhile. */
export async function cannon(
  spec: CannonSpec,
  pids: number[],
): Promise<CannonResult & { cpuMsPerReq: number }> {
  const before = pids.map(cpuMs);
  const r = await runJson<CannonResult>("cannon.mjs", spec);
  const used = pids.reduce((sum, pid, i) => sum + cpuMs(pid) - before[i]!, 0);
  return { ...r, cpuMsPerReq: r.total ? used / r.total : NaN };
}

/** A small HTTP client for setup calls (not measured). */
export function agent(base: string, token: string, session: string) {
  const headers = {
    authorization: `Bearer ${token}`,
    "x-cohent-session": session,
    "content-type": "application/json",
  };
  const check = async (res: Response) => {
    const body = (await res.json()) as any;
    if (!res.ok || !body.ok) throw new Error(`${res.status} ${JSON.stringify(body.error ?? body)}`);
    return body.data;
  };
  return {
    headers,
    post: async (body: unknown) =>
      check(await fetch(`${base}/api/agent`, { method: "POST", headers, body: JSON.stringify(body) })),
    poll: async (intentId: string, cursor = "0") =>
      check(
        await fetch(`${base}/api/agent`, {
          headers: { ...headers, "x-cohent-intent": intentId, "x-cohent-cursor": cursor },
        }),
      ),
  };
}

export const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 8);
