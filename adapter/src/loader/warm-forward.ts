import { closeSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync } from "node:fs";
import type { Out } from "../hosts/dialect.js";
import {
  folderState,
  socketFits,
  warmName,
  warmDir,
  type Caller,
  type WarmAnswer,
  type WarmRequest,
} from "./warm-route.js";

/**
 * The hook's side of the warm guard (warm-serve.ts): the payload handed over
 * a Unix socket to a process that has the adapter loaded already, and its
 * answer printed as the hook's own. Over Node's pipe handle
 * (process.binding("pipe_wrap")), as the service's lean transport uses the
 * TCP one: node:net would cost this process ~5 ms to load, more than the
 * exchange. Anything short of a whole answer leaves the call to the cold
 * path, the adapter loaded in this process as before, and that path then
 * starts a warm guard for the next call.
 */

/** Why a call was not answered warm: no guard to ask, or a guard that would not or could not answer. */
export type Miss = "absent" | "refused" | "broken" | "late";

export interface Route {
  dir: string;
  name: string;
  caller: Caller;
}

/** The route for this process's call, or null when its folder is not one only this user can use. */
export function routeOf(caller: Caller): Route | null {
  const dir = warmDir(caller.env, caller.uid);
  const name = warmName(caller);
  // Missing is fine: the first cold call makes it (startWarm). A path too long for a socket is unusable.
  return folderState(dir, caller.uid) === "shared" || !socketFits(dir, name) ? null : { dir, name, caller };
}

interface PipeHandle {
  connect(req: object, path: string): number;
  writeUtf8String(req: object, text: string): number;
  readStart(): number;
  close(): void;
  onread: (buf: ArrayBuffer | undefined) => void;
}

interface Bindings {
  Pipe: new (type: number) => PipeHandle;
  PipeConnectWrap: new () => { oncomplete?: (status: number) => void };
  SOCKET: number;
  WriteWrap: new () => { handle?: PipeHandle; oncomplete?: (status: number) => void; async?: boolean };
  state: Int32Array;
  kRead: number;
  kOffset: number;
}

function bindings(env: Caller["env"]): Bindings | null {
  const binding = (process as { binding?: (name: string) => any }).binding;
  // --pending-deprecation would print a warning for process.binding: the cold path then.
  if (!binding || /pending-deprecation/.test(`${process.execArgv.join(" ")} ${env.NODE_OPTIONS ?? ""}`))
    return null;
  try {
    const pipe = binding("pipe_wrap");
    const stream = binding("stream_wrap");
    const b: Bindings = {
      Pipe: pipe.Pipe,
      PipeConnectWrap: pipe.PipeConnectWrap,
      SOCKET: pipe.constants?.SOCKET,
      WriteWrap: stream.WriteWrap,
      state: stream.streamBaseState,
      kRead: stream.kReadBytesOrError,
      kOffset: stream.kArrayBufferOffset,
    };
    const ok =
      typeof b.Pipe === "function" &&
      typeof b.Pipe.prototype.connect === "function" &&
      typeof b.PipeConnectWrap === "function" &&
      typeof b.WriteWrap === "function" &&
      typeof b.SOCKET === "number" &&
      b.state instanceof Int32Array &&
      typeof b.kRead === "number" &&
      typeof b.kOffset === "number";
    return ok ? b : null;
  } catch {
    return null;
  }
}

/** A warm guard's answer is a hook's output: kilobytes. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * Hands one call to the warm guard at `route`. Resolves with its answer, or
 * with why there is none: "absent" (no socket, or nobody listening: start
 * one), "refused" (it is not this caller's twin, or is of an older build),
 * "broken" (it closed or failed without a whole answer), "late" (no answer
 * within `ms`). Never rejects.
 */
export function forwardWarm(
  route: Route,
  request: Omit<WarmRequest, "v" | "caller">,
  ms: number,
): Promise<Out | Miss> {
  const b = bindings(route.caller.env);
  if (!b) return Promise.resolve("broken");
  const path = `${route.dir}/${route.name}`;
  return new Promise((resolve) => {
    let handle: PipeHandle | null = new b.Pipe(b.SOCKET);
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => end("late"), ms);
    const end = (r: Out | Miss) => {
      clearTimeout(timer);
      const h = handle;
      handle = null;
      h?.close();
      resolve(r);
    };
    const finish = () => {
      let a: WarmAnswer;
      try {
        a = JSON.parse(Buffer.concat(chunks).toString("utf8")) as WarmAnswer;
      } catch {
        return end("broken");
      }
      if (!a || typeof a !== "object") return end("broken");
      if ("refused" in a) return end("refused");
      if (typeof a.exitCode !== "number") return end("broken");
      const out: Out = { exitCode: a.exitCode };
      if (typeof a.stdout === "string" && a.stdout) out.stdout = a.stdout;
      if (typeof a.stderr === "string" && a.stderr) out.stderr = a.stderr;
      end(out);
    };
    const connect = new b.PipeConnectWrap();
    connect.oncomplete = (status: number) => {
      if (!handle) return;
      if (status < 0) return end("absent"); // ENOENT, ECONNREFUSED: nobody serves this name
      handle.onread = (buf) => {
        const n = b.state[b.kRead]!;
        if (n > 0 && buf) {
          chunks.push(Buffer.from(Buffer.from(buf, b.state[b.kOffset]!, n)));
          size += n;
          if (size > MAX_ANSWER_BYTES) end("broken");
          return;
        }
        if (n === 0) return;
        // The guard closes after its answer: EOF (libuv's -4095) ends it; any other negative is an error.
        if (n === -4095) finish();
        else end("broken");
      };
      const write = new b.WriteWrap();
      write.handle = handle;
      write.oncomplete = (s: number) => {
        if (s < 0) end("broken");
      };
      write.async = false;
      const line = JSON.stringify({ v: 2, caller: route.caller, ...request } satisfies WarmRequest) + "\n";
      if (handle.writeUtf8String(write, line) < 0 || handle.readStart() < 0) end("broken");
    };
    if (handle.connect(connect, path) < 0) end("absent");
  });
}

/** Removes a guard's socket name (one that did not answer in time): it ends when it sees the name gone. */
export function freeName(route: Route): void {
  try {
    unlinkSync(`${route.dir}/${route.name}`);
  } catch {
    /* gone already */
  }
}

/** How long a starting guard's claim on its name stands before another hook may start one. */
const STARTING_MS = 20_000;
/**
 * At most this many guards' sockets in one user's folder: a client that set
 * a variable anew for every hook would otherwise start a guard per call (each
 * ends a minute later, unused: warm-serve.ts).
 */
export const MAX_GUARDS = 32;

/**
 * Starts the warm guard for this route, detached, after a cold call: at
 * most one at a time per name (a lock file the guard removes once it
 * listens). Best effort: a guard that does not start leaves every call cold.
 */
export function startWarm(route: Route, script: string): void {
  try {
    mkdirSync(route.dir, { recursive: true, mode: 0o700 });
    if (folderState(route.dir, route.caller.uid) !== "private") return;
    const sockets = readdirSync(route.dir).filter((n) => n.endsWith(".sock"));
    if (sockets.length >= MAX_GUARDS && !sockets.includes(route.name)) return;
    const lock = `${route.dir}/${route.name}.lock`;
    try {
      closeSync(openSync(lock, "wx", 0o600));
    } catch {
      // Another hook is starting it; a lock left by a guard that died starting is taken over once old.
      if (Date.now() - statSync(lock).mtimeMs < STARTING_MS) return;
      unlinkSync(lock);
      closeSync(openSync(lock, "wx", 0o600));
    }
    const { spawn } = process.getBuiltinModule("node:child_process") as typeof import("node:child_process");
    spawn(process.execPath, [script, "warm", route.name], {
      cwd: route.caller.cwd,
      env: route.caller.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: "ignore",
    }).unref();
  } catch {
    /* cold calls, then */
  }
}
