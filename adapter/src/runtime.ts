import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "./envelope.js";
import { crypto } from "./builtins.js";

/**
 * .cohent/runtime.json: per-checkout, per-session state. The adapter is a
 * fresh process on every hook, so this file is what keeps one announced
 * prompt bound to one session identity across invocations. Several
 * sessions share a checkout, and hooks of one session can run in
 * parallel, so every change is a read-modify-write under a lock file, and
 * every write is a rename of a complete file.
 */

export interface SessionState {
  client: string | null;
  model: string | null;
  intentId?: string;
  action?: string;
  cursor?: string;
  /** The claimed scope: declared with `scope` (explicit) or accumulated from edit targets. */
  scope: string[];
  explicitScope: boolean;
  touched: string[];
  control: "active" | "paused" | "cancelled";
  controlReason: string | null;
  /** A poll packet received in PreToolUse, injected (and acknowledged) at the next PostToolUse. */
  pending?: { packetId: string; text: string };
  /** When the guard last polled (ms since the epoch); between polls it only reads the kill switch. */
  polledAt?: number;
  seenAt: string;
  endedAt?: string;
  /** Set while UserPromptSubmit publishes; still set at the next PreToolUse means that publish was missed (failsafe.ts). */
  publishing?: { at: string; intentBefore: string | null };
  /** Claude Code sub-agents seen since the last prompt, spawns not yet seen, and a Stop held back for them (subagents.ts). */
  subagents?: { ids: string[]; pending: number; stopHeld?: boolean };
}

/** What the PreToolUse hook hands an exempt command: its session, and the answer when the hook ran it. */
export interface Relay {
  key: string;
  sessionId: string;
  at: string;
  result?: { envelope: Envelope; exitCode: number };
}

export interface Runtime {
  version: 1;
  sessions: Record<string, SessionState>;
  relays: Relay[];
}

/** A session that called within this long and did not end counts as live. */
export const LIVE_MS = 10 * 60_000;
const RELAY_MS = 2 * 60_000;
const LOCK_STALE_MS = 10_000;

export function runtimeFile(root: string): string {
  return join(root, ".cohent", "runtime.json");
}

export function emptySession(now = new Date()): SessionState {
  return { client: null, model: null, scope: [], explicitScope: false, touched: [], control: "active", controlReason: null, seenAt: now.toISOString() };
}

export function readRuntime(root: string): Runtime {
  try {
    const rt = JSON.parse(readFileSync(runtimeFile(root), "utf8")) as Runtime;
    if (rt && rt.version === 1 && rt.sessions && Array.isArray(rt.relays)) return rt;
  } catch {
    /* missing or unreadable: start over */
  }
  return { version: 1, sessions: {}, relays: [] };
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleep(ms: number) {
  Atomics.wait(sleeper, 0, 0, ms);
}

function lock(file: string): () => void {
  const lockFile = `${file}.lock`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      closeSync(openSync(lockFile, "wx"));
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      try {
        if (Date.now() - statSync(lockFile).mtimeMs > LOCK_STALE_MS) rmSync(lockFile, { force: true });
      } catch {
        /* it went away */
      }
      if (Date.now() > deadline) throw new Error(`runtime.json stays locked (${lockFile}); remove it if no agent is running`);
      sleep(3 + Math.floor(Math.random() * 7));
    }
  }
}

export function writeRuntimeAtomic(root: string, rt: Runtime): void {
  const file = runtimeFile(root);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, JSON.stringify(rt, null, 1) + "\n");
  renameSync(tmp, file);
}

/** Read, change and write runtime.json atomically under its lock; drops expired relays on the way. */
export function updateRuntime<T>(root: string, change: (rt: Runtime) => T): T {
  mkdirSync(join(root, ".cohent"), { recursive: true });
  const unlock = lock(runtimeFile(root));
  try {
    const rt = readRuntime(root);
    const cutoff = Date.now() - RELAY_MS;
    rt.relays = rt.relays.filter((r) => Date.parse(r.at) > cutoff);
    const out = change(rt);
    writeRuntimeAtomic(root, rt);
    return out;
  } finally {
    unlock();
  }
}

/** Changes one session's state (creating it), stamping seenAt. */
export function updateSession(root: string, sessionId: string, change: (s: SessionState) => void): SessionState {
  return updateRuntime(root, (rt) => {
    const s = (rt.sessions[sessionId] ??= emptySession());
    change(s);
    s.seenAt = new Date().toISOString();
    return s;
  });
}

export function liveSessions(rt: Runtime, now = Date.now()): string[] {
  return Object.entries(rt.sessions)
    .filter(([, s]) => !s.endedAt && now - Date.parse(s.seenAt) < LIVE_MS)
    .map(([id]) => id);
}

/** The relay key of an adapter command: its arguments after the script, exactly as the process will see them. */
export function relayKey(argv: readonly string[]): string {
  return JSON.stringify(argv);
}

/** x-cohent-session wants [A-Za-z0-9._:-]{1,128}; client session ids are UUIDs, but be safe. */
export function sessionHeader(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9._:-]/g, "-");
  return clean.length > 0 && clean.length <= 128 ? clean : "h-" + crypto().createHash("sha256").update(id).digest("hex").slice(0, 40);
}
