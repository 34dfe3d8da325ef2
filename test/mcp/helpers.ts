import { execFileSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { makeCheckout, run, type Checkout, type Run, type RunOptions } from "../adapter/helpers.js";
import { backendWithRepo, type TestBackend } from "../helpers/backend.js";

/**
 * The machine transports as shipped: both built files copied into a real Git
 * checkout's .cohent/, run as child processes against a real backend.
 */

export type Repo = Checkout;

/** The seven operations every machine transport offers, in the order the server lists them. */
export const TOOL_NAMES = [
  "publish",
  "intent",
  "scope",
  "checkpoint",
  "context",
  "commit",
  "request-release",
];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  }).toString();
}

/** A fresh Git repository with .cohent/ (project file, cohent.mjs, cohent-mcp.mjs) and its own HOME. */
export async function makeRepo(service: string | null, repository = "acme/shop"): Promise<Repo> {
  const repo = await makeCheckout(service, repository);
  git(repo.root, "init", "-q");
  return repo;
}

/** A backend with acme/shop, a token for `person`, and a checkout wired to it: what each suite here starts from. */
export async function startFixture(
  person: string,
  goal = "",
): Promise<{ backend: TestBackend; repo: Repo; token: string }> {
  const {
    backend,
    tokens: [token],
  } = await backendWithRepo("acme/shop", goal, [person]);
  return { backend, token, repo: await makeRepo(backend.url) };
}

export function childEnv(repo: Repo, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    PATH: process.env.PATH,
    HOME: repo.home,
    COHENT_USAGE_LOG: "0",
    ...extra,
  }))
    if (v !== undefined) env[k] = v;
  return env;
}

export interface Connected {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
  setRoots: (uris: string[]) => Promise<void>;
}

/** An SDK client over stdio spawning `node .cohent/cohent.mjs mcp`; with `roots`, it advertises the roots capability. */
export async function connect(
  repo: Repo,
  opts: {
    env?: Record<string, string | undefined>;
    args?: string[];
    name?: string;
    version?: string;
    roots?: string[];
    cwd?: string;
  } = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [repo.script, "mcp", ...(opts.args ?? [])],
    cwd: opts.cwd ?? repo.root,
    env: childEnv(repo, opts.env),
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (c) => (err += c));
  let roots = opts.roots;
  const client = new Client(
    { name: opts.name ?? "test-client", version: opts.version ?? "1.0.0" },
    { capabilities: roots ? { roots: { listChanged: true } } : {} },
  );
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: (roots ?? []).map((uri) => ({ uri })),
    }));
  await client.connect(transport);
  return {
    client,
    stderr: () => err,
    close: () => client.close(),
    setRoots: async (uris) => {
      roots = uris;
      await client.sendRootsListChanged();
    },
  };
}

/** A loopback "service" that accepts requests and never answers: a backend call held open. */
export async function hangingService(): Promise<{
  url: string;
  requests: () => number;
  closedSockets: () => number;
  waitForRequest: () => Promise<void>;
  waitForClose: () => Promise<number>;
  stop: () => Promise<void>;
}> {
  let requests = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  const waiters: (() => void)[] = [];
  const closeWaiters: (() => void)[] = [];
  const server = http.createServer((req) => {
    requests++;
    req.resume();
    waiters.splice(0).forEach((w) => w());
    req.socket.once("close", () => {
      closed++;
      closeWaiters.splice(0).forEach((w) => w());
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    closedSockets: () => closed,
    waitForRequest: () => (requests > 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    waitForClose: () => {
      const start = performance.now();
      return closed > 0
        ? Promise.resolve(0)
        : new Promise<number>((r) => closeWaiters.push(() => r(performance.now() - start)));
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Runs the built adapter with args, usage logging off; `onSpawn` may signal the child. */
export function runAdapter(repo: Repo, args: string[], opts: RunOptions = {}): Promise<Run> {
  return run(repo, args, { ...opts, env: { COHENT_USAGE_LOG: "0", ...opts.env } });
}

/** stdout holds exactly one JSON document (one line). */
export function oneJson(stdout: string): any {
  const lines = stdout.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== 1)
    throw new Error(`expected exactly one JSON line on stdout, got ${lines.length}: ${stdout.slice(0, 500)}`);
  return JSON.parse(lines[0]!);
}
