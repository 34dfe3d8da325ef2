import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const COHENT = path.resolve("cli/bin/cohent.mjs");

/** `cohent serve` as its own process on a free port (or `port`); resolves once it listens. */
export function serve(
  databaseUrl: string,
  env: Record<string, string> = {},
  port = 0,
): Promise<{ url: string; child: ChildProcess }> {
  const args = [COHENT, "serve", "--port", String(port)];
  const childEnv: NodeJS.ProcessEnv = { ...process.env, COHENT_LOG_LEVEL: "warn", ...env };
  delete childEnv.NODE_OPTIONS;
  if (databaseUrl.startsWith("file:")) {
    delete childEnv.DATABASE_URL;
    args.push("--data-dir", path.dirname(databaseUrl.slice("file:".length)));
  } else childEnv.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, args, { env: childEnv, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`cohent serve did not start: ${err}`)), 60_000);
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = err.match(/cohent serving on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, child });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`cohent serve exited ${code}: ${err}`));
    });
  });
}

/** Stops a child process and waits for its exit. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill(signal);
  await exited;
}
