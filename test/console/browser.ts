import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const ARTIFACTS = path.join(ROOT, "test/artifacts/console");
const CHROMIUM = process.env.COHENT_CHROMIUM ?? "/usr/bin/chromium";

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Builds the console when its sources are newer than the build, so the browser never tests a stale UI.
 * Browser suites run in parallel workers: a lock directory lets one build while the others wait.
 */
export function ensureConsoleBuilt(): void {
  const handler = path.join(ROOT, "console/build/handler.js");
  const fresh = () => {
    const src = Math.max(
      newest(path.join(ROOT, "console/src")),
      statSync(path.join(ROOT, "console/vite.config.ts")).mtimeMs,
    );
    return existsSync(handler) && statSync(handler).mtimeMs >= src;
  };
  const lock = path.join(ROOT, "console/.build-lock");
  for (;;) {
    if (fresh()) return;
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another worker builds; a lock older than five minutes belongs to a dead one.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 300_000)
        rmSync(lock, { recursive: true, force: true });
      sleep(250);
    }
  }
  try {
    if (fresh()) return;
    execFileSync(
      process.execPath,
      [path.join(ROOT, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "error"],
      { cwd: path.join(ROOT, "console"), stdio: "inherit" },
    );
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
      "--disable-quic",
    ],
    // playwright-core gives every launch a fresh, empty user-data-dir of its own and removes it on close.
  });
  return {
    browser,
    close: async () => {
      await browser.close();
    },
  };
}

export interface ControlRoom {
  serve: ServeProcess;
  browser: Browser;
  page: Page;
  close: () => Promise<void>;
}

/** What each browser suite starts from: the console built, the real `cohent serve`, and a chromium page `height` pixels tall. */
export async function openControlRoom(height: number): Promise<ControlRoom> {
  ensureConsoleBuilt();
  const serve = await startServe();
  try {
    const { browser, close } = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1366, height } })).newPage();
    return {
      serve,
      browser,
      page,
      close: async () => {
        await close();
        await serve.stop();
      },
    };
  } catch (e) {
    await serve.stop();
    throw e;
  }
}

export interface ServeProcess {
  url: string;
  signInLink: string;
  dataDir: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}

/**
 * The real `cohent serve`, as a newcomer starts it: a child process on a free port with its own data
 * directory.
 */
export async function startServe(env: Record<string, string> = {}): Promise<ServeProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "cohent-serve-"));
  const child = spawn(
    process.execPath,
    [path.join(ROOT, "cli/bin/cohent.mjs"), "serve", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        COHENT_LOG_LEVEL: "warn",
        GITHUB_CLIENT_ID: "",
        GITHUB_CLIENT_SECRET: "",
        DATABASE_URL: "",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let err = "";
  const ready = new Promise<{ url: string; link: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cohent serve did not start:\n${err}`)), 60_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const url = /cohent serving on (\S+)/.exec(err)?.[1];
      const link =
        /one-time link\): (\S+)/.exec(err)?.[1] ?? (/sign in with GitHub/.test(err) ? "" : undefined);
      if (url && link !== undefined) {
        clearTimeout(timer);
        resolve({ url, link });
      }
    });
    child.once("exit", (code) => reject(new Error(`cohent serve exited ${code}:\n${err}`)));
  });
  const { url, link } = await ready;
  return {
    url,
    signInLink: link,
    dataDir,
    child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs the admin CLI against a data directory and returns stdout. */
export function cohent(args: string[], dataDir: string): string {
  return execFileSync(
    process.execPath,
    [path.join(ROOT, "cli/bin/cohent.mjs"), ...args, "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: { ...process.env, COHENT_LOG_LEVEL: "warn", DATABASE_URL: "" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

export function screenshotPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, `${name}.png`);
}
