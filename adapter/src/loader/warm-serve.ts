import { AsyncLocalStorage } from "node:async_hooks";
import { renameSync, statSync, unlinkSync } from "node:fs";
import { isHost } from "@cohent/protocol/hosts";
import { hostFlag } from "../hosts/detect.js";
import {
  folderState,
  sameCaller,
  warmDir,
  warmName,
  type Caller,
  type WarmAnswer,
  type WarmRequest,
} from "./warm-route.js";

/**
 * The warm guard: `node .cohent/cohent.cjs warm <name>`, started detached by
 * a hook's cold call (warm-forward.ts), serving the hooks of one user,
 * checkout, build and agent (warm-route.ts) over a Unix socket: one guard
 * for all of an agent's hooks, whatever else their environments differ in.
 * Each call runs the adapter's own in-process hook (the one OpenCode's
 * plugin and the MCP server call) with the caller's own environment and
 * working folder (perCall), and that hook reads the session, the pause and
 * the peers' claims afresh on every call, as a hook process does: nothing
 * is answered from memory, so a pause has no window here either.
 *
 * It ends by itself: idle for COHENT_WARM_IDLE_MS (10 minutes; one minute
 * when no call came at all: an environment that is not seen again), when
 * cohent.cjs or cohent-core.js changes or goes (an upgrade, a checkout
 * removed), or when another guard took its name. Every ending leaves the
 * next call cold, never unanswered.
 */

type Hook = (
  payload: string,
  o: { host: string; dir: string },
) => Promise<{ stdout?: string; stderr?: string; exitCode: number }>;

const IDLE_MS =
  Number(process.env.COHENT_WARM_IDLE_MS) > 0 ? Number(process.env.COHENT_WARM_IDLE_MS) : 600_000;
/** A guard no call reached in this long ends: its caller's environment changed (a variable set per call). */
const UNUSED_MS = 60_000;
/** How often it looks at its files and its name. */
const CHECK_MS = 2_000;
/** A request is one hook payload; clients cap theirs far below this. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/**
 * Runs a function with a caller's environment and working folder as this
 * process's (process.env and process.cwd(), what the adapter's code reads
 * and what the programs it starts inherit), for the calls it makes until
 * their answer, however many run at once: each call's own, through
 * AsyncLocalStorage. Outside a call, the guard's own. Installed once.
 */
export function perCall(): <T>(c: Pick<Caller, "cwd" | "env">, f: () => T) => T {
  const calls = new AsyncLocalStorage<{ cwd: string; env: Record<string, string | undefined> }>();
  const own = process.env;
  const ownCwd = process.cwd.bind(process);
  const env = (): Record<string, string | undefined> => calls.getStore()?.env ?? own;
  process.env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_t, k) => (typeof k === "string" ? env()[k] : undefined),
    set: (_t, k, v) => (typeof k === "string" ? ((env()[k] = String(v)), true) : false),
    deleteProperty: (_t, k) => (typeof k === "string" ? delete env()[k] : true),
    has: (_t, k) => typeof k === "string" && env()[k] !== undefined,
    ownKeys: () => Object.keys(env()).filter((k) => env()[k] !== undefined),
    getOwnPropertyDescriptor: (_t, k) => {
      const v = typeof k === "string" ? env()[k] : undefined;
      return v === undefined ? undefined : { value: v, writable: true, enumerable: true, configurable: true };
    },
  });
  process.cwd = () => calls.getStore()?.cwd ?? ownCwd();
  return (c, f) => calls.run({ cwd: c.cwd, env: { ...c.env } }, f);
}

export function serveWarm(name: string, caller: () => Caller | null, hook: Hook): void {
  const me = caller();
  if (!me || warmName(me) !== name) return; // the build changed while it started: the next cold call starts another
  const dir = warmDir(me.env, me.uid);
  const path = `${dir}/${name}`;
  const lock = `${path}.lock`;
  if (folderState(dir, me.uid) !== "private") return;
  const net = process.getBuiltinModule("node:net") as typeof import("node:net");
  const asCaller = perCall();
  let last = Date.now();
  let served = 0;
  let busy = 0;
  let ino = -1;
  let closing = false;

  const answer = async (req: WarmRequest): Promise<WarmAnswer> => {
    const now = caller();
    if (!now || now.stamps.join() !== me.stamps.join()) {
      stop(true);
      return { refused: "stale" };
    }
    if (!sameCaller(req.caller, me)) return { refused: "not-same-caller" };
    const host = hostFlag(req.argv);
    const c = req.caller;
    if (host === null || !isHost(host) || typeof req.stdin !== "string" || typeof c.cwd !== "string")
      return { refused: "bad-request" };
    return asCaller(c, () => hook(req.stdin, { host, dir: c.cwd }));
  };

  const server = net.createServer((conn) => {
    const chunks: Buffer[] = [];
    let size = 0;
    conn.on("error", () => conn.destroy());
    // A hook sends its whole call at once; a connection that does not is nobody's.
    conn.setTimeout(30_000, () => conn.destroy());
    conn.on("data", (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size > MAX_REQUEST_BYTES) return conn.destroy();
      if (c.indexOf(10) === -1) return;
      conn.removeAllListeners("data");
      conn.setTimeout(0); // the call itself may wait as long as the hook's deadline
      let req: WarmRequest;
      try {
        req = JSON.parse(Buffer.concat(chunks).toString("utf8")) as WarmRequest;
        if (!req || req.v !== 2 || !req.caller || !Array.isArray(req.argv)) throw new Error("not a request");
      } catch {
        return conn.end(JSON.stringify({ refused: "bad-request" } satisfies WarmAnswer));
      }
      busy++;
      served++;
      last = Date.now();
      // Counted until the connection is closed, so that an ending guard never cuts an answer short.
      conn.once("close", () => {
        busy--;
        last = Date.now();
        if (closing && busy === 0) process.exit(0);
      });
      answer(req).then(
        (a) => conn.end(JSON.stringify(a)),
        // The in-process hook never throws; if it did, the hook runs the call cold.
        () => conn.destroy(),
      );
    });
  });

  /** Stops listening; `unlink` removes the name when it is still this guard's. */
  function stop(unlink: boolean): void {
    if (closing) return;
    closing = true;
    server.close();
    if (unlink)
      try {
        if (statSync(path).ino === ino) unlinkSync(path);
      } catch {
        /* gone already */
      }
    if (busy === 0) process.exit(0);
  }

  // Listens under a name of its own, then takes the socket's name at once (rename): two guards
  // started together both listen, the last rename wins, and the other sees its name gone and ends.
  // Shorter than the name it takes (warm-route.ts socketFits): a path that fits for one fits for the other.
  const tmp = `${dir}/${process.pid}.tmp`;
  try {
    unlinkSync(tmp); // a pid is one live process's: a file of that name was left by one that ended
  } catch {
    /* none */
  }
  server.on("error", () => process.exit(0));
  server.listen(tmp, () => {
    try {
      ino = statSync(tmp).ino;
      renameSync(tmp, path);
    } catch {
      process.exit(0);
    }
    try {
      unlinkSync(lock);
    } catch {
      /* taken over */
    }
  });
  setInterval(() => {
    if (closing) return;
    const now = caller();
    if (!now || now.stamps.join() !== me.stamps.join()) return stop(true);
    let mine = false;
    try {
      mine = statSync(path).ino === ino;
    } catch {
      /* removed */
    }
    if (!mine) return stop(false);
    if (busy === 0 && Date.now() - last > (served ? IDLE_MS : Math.min(IDLE_MS, UNUSED_MS))) stop(true);
  }, CHECK_MS).unref();
}
