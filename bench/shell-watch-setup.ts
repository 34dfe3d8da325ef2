import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { claude } from "../test/adapter/helpers.js";
import { agentClient } from "../test/helpers/backend.js";
import { benchCheckout } from "./lib.js";

// bench/shell-watch.ts's set-up: its constants, the hook process, the generated checkout, the peers and their claims.

export const RUNS = Number(process.env.COHENT_BENCH_RUNS ?? 20);
export const SIZES = (process.env.COHENT_BENCH_SIZES ?? "10000,100000").split(",").map(Number);
export const LEVELS = [0, 10, 200] as const;
export const GOAL_MS = 5;
/** Above this many files the generated checkout is left uncommitted (git add -A of 100,000 files took ~26 s here). */
export const COMMIT_UP_TO = 20_000;
export const SESSION = "bench-shell";
export const WRITE = "sh scripts/build.sh";
export const READ = "cat README.md";
export const PEERS = 10;

export type Level = (typeof LEVELS)[number];
export type Event = "PreToolUse" | "PostToolUse";

export interface Ran {
  ms: number;
  stdout: string;
}

/** One child process, timed from spawn to close, as adapter-coldstart.ts's `once` (stdout kept for the checks). */
export function proc(args: string[], cwd: string, env: Record<string, string>, stdin = ""): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve({ ms: performance.now() - start, stdout })
        : reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}${stdout}`)),
    );
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

/** A tree of `n` small files: src/p<a>/m<b>/f<c>.ts, ten per leaf folder, written in one tight sync loop. */
export function generate(root: string, n: number): void {
  for (let leaf = 0; leaf < n / 10; leaf++) {
    const dir = path.join(root, "src", `p${Math.floor(leaf / 100)}`, `m${leaf % 100}`);
    mkdirSync(dir, { recursive: true });
    for (let c = 0; c < 10; c++)
      writeFileSync(path.join(dir, `f${c}.ts`), `export const v = ${leaf * 10 + c};\n`);
  }
  mkdirSync(path.join(root, "scripts"), { recursive: true });
  mkdirSync(path.join(root, "docs"), { recursive: true });
  writeFileSync(path.join(root, "README.md"), "# bench\n");
  writeFileSync(path.join(root, "scripts", "build.sh"), "echo built\n");
  writeFileSync(path.join(root, "docs", "guide.md"), "g\n");
  writeFileSync(path.join(root, ".gitignore"), ".cohent/runtime.json*\n");
}

export const leafDir = (leaf: number) => `src/p${Math.floor(leaf / 100)}/m${leaf % 100}`;

/**
 * The 200 claims, as each of 10 peers holds them: 15 files and 5 folders
 * (of 10 files) each, spread over the tree and disjoint (folders on even
 * leaves, files on odd ones). At 10 claims the first peer holds 7 files
 * and 3 folders; at 0 nobody holds anything.
 */
export function claimsOf(n: number): { files: string[]; folders: string[] }[] {
  const leaves = n / 10;
  const folderStep = 2 * Math.floor(leaves / 100); // even
  const fileStep = 2 * Math.floor(leaves / 300); // even; files on fileStep·i + 3, odd
  const peers: { files: string[]; folders: string[] }[] = [];
  for (let k = 0; k < PEERS; k++) {
    const files: string[] = [];
    const folders: string[] = [];
    for (let i = 15 * k; i < 15 * (k + 1); i++) files.push(`${leafDir(fileStep * i + 3)}/f${i % 10}.ts`);
    for (let j = 5 * k; j < 5 * (k + 1); j++) folders.push(`${leafDir(folderStep * j)}/`);
    peers.push({ files, folders });
  }
  return peers;
}

export function pathsAt(level: Level, k: number, c: { files: string[]; folders: string[] }): string[] {
  if (level === 200) return [...c.files, ...c.folders];
  if (level === 10 && k === 0) return [...c.files.slice(0, 7), ...c.folders.slice(0, 3)];
  return [];
}

export interface Bench {
  size: number;
  root: string;
  committed: string;
  generatedMs: number;
  hook(event: Event, command: string, id: string): Promise<Ran>;
  nodeZero(): Promise<Ran>;
  setLevel(level: Level): Promise<void>;
  /** The pending snapshot of a call between its Pre and Post: files held, files read, bytes read. */
  pending(id: string): { files: number; read: number; bytesRead: number; complete: boolean };
  scriptArgs(nodeArgs: string[]): string[];
  env: Record<string, string>;
  payload(event: Event, command: string, id: string): string;
  stop(): Promise<void>;
}

export async function setUp(size: number): Promise<Bench> {
  const co = await benchCheckout(`bench/shell-${size}`, "Claude Code");
  try {
    const { root } = co;
    const t0 = performance.now();
    generate(root, size);
    const generatedMs = performance.now() - t0;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: root, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("config", "gc.auto", "0"); // no detached gc left writing .git/objects while the checkout is removed
    let committed: string;
    if (size <= COMMIT_UP_TO) {
      const t1 = performance.now();
      git("add", "-A");
      git(
        "-c",
        "gc.auto=0",
        "-c",
        "user.name=Bench",
        "-c",
        "user.email=bench@example.com",
        "commit",
        "-q",
        "-m",
        "generated",
      );
      committed = `committed (git add -A + commit ${((performance.now() - t1) / 1000).toFixed(1)} s)`;
    } else committed = "git init only, not committed";

    const script = path.join(root, ".cohent", "cohent.cjs");
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: co.home,
      ...claude.env,
      COHENT_AGENT_TOKEN: co.token,
    };
    const payload = (event: Event, command: string, id: string) =>
      JSON.stringify({
        ...claude.bash(SESSION, root, command, event),
        tool_use_id: id,
        ...(event === "PostToolUse"
          ? { tool_response: { stdout: "", stderr: "", interrupted: false, isImage: false } }
          : {}),
      });
    const hook = (event: Event, command: string, id: string) =>
      proc([script, "hook"], root, env, payload(event, command, id));

    // The caller: a published prompt, an intent and a declared scope elsewhere (docs/), so its shell calls are allowed.
    await proc(
      [script, "hook"],
      root,
      env,
      JSON.stringify(claude.prompt(SESSION, root, "Bench the shell watch")),
    );
    const cmd = (args: string[]) => proc([co.script, ...args], root, { ...env, COHENT_SESSION: SESSION });
    await cmd([
      "intent",
      JSON.stringify({ objective: "Bench the shell watch", outputs: ["bench-shell-out"] }),
    ]);
    await cmd(["scope", "docs"]);

    // The peers: one person each, one session and intent each, their claims set per block.
    const claims = claimsOf(size);
    const peers: { post: (b: unknown) => Promise<{ status: number; body: any }>; intentId: string }[] = [];
    for (let k = 0; k < PEERS; k++) {
      const token = await co.backend.issueToken(`bench/shell-${size}`, `peer${k}`, "Claude Code");
      const c = agentClient(co.backend.url, token, `peer-${k}`);
      const r = await c.post({ type: "publish", prompt: `Peer ${k} works on part ${k} of src` });
      const intentId = r.body.data?.intentId as string;
      if (!intentId) throw new Error(`peer ${k} publish: ${JSON.stringify(r.body)}`);
      await c.post({
        type: "intent",
        intentId,
        intent: { objective: `Part ${k} of src`, outputs: [`part-${k}`] },
      });
      peers.push({ post: c.post, intentId });
    }
    const current = new Map<number, string>();
    const setLevel = async (level: Level) => {
      for (let k = 0; k < PEERS; k++) {
        const paths = pathsAt(level, k, claims[k]!);
        const key = paths.join("\n");
        if (current.get(k) === key) continue;
        const r = await peers[k]!.post({ type: "scope", intentId: peers[k]!.intentId, paths });
        if (r.status !== 200 || !r.body.ok) throw new Error(`peer ${k} scope: ${JSON.stringify(r.body)}`);
        current.set(k, key);
      }
    };
    // As the caller's hook will read them (the caller's own intent, seen from another session, left out).
    const check = agentClient(co.backend.url, co.token, "bench-check");
    const ids = new Set(peers.map((p) => p.intentId));
    for (const level of LEVELS) {
      await setLevel(level);
      const r = await check.post({ type: "scopes" });
      const n = (r.body.data.peers as { intentId: string; paths: string[] }[])
        .filter((p) => ids.has(p.intentId))
        .reduce((s, p) => s + p.paths.length, 0);
      if (n !== level) throw new Error(`expected ${level} claimed paths, the service lists ${n}`);
    }
    const stash = path.join(root, ".git", "cohent", "held", "pending");
    return {
      size,
      root,
      committed,
      generatedMs,
      hook,
      nodeZero: () => proc(["-e", "0"], root, env),
      setLevel,
      pending: (id) => {
        const name = readdirSync(stash).find((f) => f.endsWith(`~s${id}.json`));
        if (!name) throw new Error(`no pending snapshot for ${id} in ${stash}`);
        const snap = JSON.parse(readFileSync(path.join(stash, name), "utf8")).snap;
        return {
          files: snap.files.length,
          read: snap.read,
          bytesRead: snap.bytesRead,
          complete: snap.complete,
        };
      },
      scriptArgs: (nodeArgs) => [...nodeArgs, script, "hook"],
      env,
      payload,
      stop: co.stop,
    };
  } catch (err) {
    await co.stop().catch(() => undefined);
    throw err;
  }
}
