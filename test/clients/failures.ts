// The ways the adapter itself fails, made real in a checkout: the file is
// missing, it throws while loading, or it hangs (every request to the
// service never answers, with no transport timeout of its own, so only the
// adapter's deadline can end it). `node` missing from PATH and a backend
// that accepts connections but never answers are set up by the caller.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";

export type AdapterFailure = "missing" | "throws" | "hangs";

/** What the hooks run (init's wiring): the adapter itself, not the cohent.mjs entry. */
const ADAPTER = ".cohent/cohent.cjs";
const SAVED = ".cohent/cohent.cjs.saved";
const REAL = ".cohent/cohent-real.cjs";

/** A broken bundle: throws at load with a stack trace and an absolute path, which must never reach the model. */
const THROWS = `throw new Error("cohent test: broken bundle at " + __filename);\n`;

/** Every TCP connect made one that never completes (under node:http and the lean transport alike). */
const HANG_PATCH = ".cohent/hang-patch.cjs";
const HANG = `const { TCP } = process.binding("tcp_wrap");
TCP.prototype.connect = TCP.prototype.connect6 = () => 0;
`;

/**
 * The real adapter, loaded after the hang patch, with no transport timeout to end it. The warm
 * guard a hook call starts (adapter/src/loader/warm-*.ts) is another process, which hangs the same
 * way: the patch reaches it through NODE_OPTIONS, as the service's silence would reach it.
 */
const HANGS = `process.env.COHENT_TIMEOUT_MS = "3600000";
process.env.NODE_OPTIONS = "--require " + require("node:path").join(__dirname, "hang-patch.cjs");
require("./hang-patch.cjs");
require("./cohent-real.cjs");
`;

export function breakAdapter(repo: string, how: AdapterFailure): void {
  restoreAdapter(repo);
  renameSync(join(repo, ADAPTER), join(repo, SAVED));
  if (how === "throws") writeFileSync(join(repo, ADAPTER), THROWS);
  if (how === "hangs") {
    renameSync(join(repo, SAVED), join(repo, REAL));
    writeFileSync(join(repo, HANG_PATCH), HANG);
    writeFileSync(join(repo, ADAPTER), HANGS);
  }
}

export function restoreAdapter(repo: string): void {
  rmSync(join(repo, HANG_PATCH), { force: true });
  if (existsSync(join(repo, REAL))) renameSync(join(repo, REAL), join(repo, ADAPTER));
  else if (existsSync(join(repo, SAVED))) {
    rmSync(join(repo, ADAPTER), { force: true });
    renameSync(join(repo, SAVED), join(repo, ADAPTER));
  }
}

/** A PATH directory with every program of the system directories except `node`. */
export function pathWithoutNode(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const sys of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    if (!existsSync(sys)) continue;
    for (const name of readdirSync(sys)) {
      if (name === "node" || name === "nodejs" || existsSync(join(dir, name))) continue;
      try {
        symlinkSync(join(sys, name), join(dir, name));
      } catch {
        /* a name taken by an earlier directory */
      }
    }
  }
  return dir;
}

/** A TCP server on a free loopback port that accepts every connection and never answers. */
export function blackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    );
  });
}
