import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "@cohent/protocol";
import { crypto } from "../builtins.js";
import { lockFile } from "./lock-file.js";

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
  /**
   * A poll packet received in PreToolUse, injected (and acknowledged) at the
   * next PostToolUse; `notices` are the lines of its notices, which a refusal
   * on the same call carries instead (told once, before the refusal).
   */
  pending?: { packetId: string; text: string; notices?: string };
  /** The paths this session's intent waits for in the claim queue (scope --queue), until granted or left. */
  queued?: string[];
  /** The service's lease epoch for this session as last seen (client.ts fenced). */
  epoch?: number;
  /** When the guard last polled (ms since the epoch); between polls it only reads the kill switch. */
  polledAt?: number;
  seenAt: string;
  endedAt?: string;
  /** Set while UserPromptSubmit publishes; still set at the next PreToolUse means that publish was missed (guard.ts). */
  publishing?: PublishMark;
  /** Claude Code sub-agents seen since the last prompt, spawns not yet seen, and a Stop held back for them (subagents.ts). */
  subagents?: Subagents;
  /** The guard wiring was checked for this session (at its start, or its first prompt): hook.ts checkWiring. */
  wiringChecked?: boolean;
  /** An OpenCode sub-agent's own session: its parent's id, whose intent and scope its calls are held to (hook.ts). */
  parent?: string;
  /** The host's version, as a payload once said it (OpenCode's session info): reported on later calls too. */
  hostVersion?: string;
  /** A write caught after a call that the host could not be told of at its PostToolUse: the next tool call is refused with it, once (hook-caught.ts). */
  caught?: string;
  /** A change under this session's own claim that another made, noticed at a PreToolUse: told at the call's PostToolUse (hook-caught.ts). */
  heard?: string;
  /** This session's last refusals, newest last: what `why` prints (adapter guard/act.ts). */
  refusals?: Refusal[];
  /**
   * A write whose answer never came (the service unreachable after it was sent): its request id and
   * a hash of its body, so that the same write sent again is the same request (service/client.ts post).
   */
  unsettled?: { id: string; body: string };
}

/** One refusal of the guard, as `why` shows it: the rule that gave it, the facts it read, what to do. */
export interface Refusal {
  at: string;
  /** The rule's name (adapter guard/rules.ts), and the verdict's code. */
  rule: string;
  code: string;
  tool: string;
  facts: Record<string, string>;
  todo: string;
  /** The refusal's words as the model read them, bounded. */
  reason: string;
}

/** What the PreToolUse hook hands an exempt command: its session, and the answer when the hook ran it. */
export interface Relay {
  key: string;
  sessionId: string;
  at: string;
  result?: { envelope: Envelope<any>; exitCode: number };
}

export interface Runtime {
  version: 1;
  sessions: Record<string, SessionState>;
  relays: Relay[];
  /**
   * Present while the service shows this checkout as "guard wiring
   * modified" (wiring-check.ts): the first intact session start after a
   * repair then clears it, and no other intact start sends anything.
   */
  wiring?: { reportedAt: string };
  /** Each adapter file's hash, with the stat it was computed for (wiring-check.ts readWiring). */
  wiringHashes?: Record<string, { stat: string; hash: string }>;
}

/** A session that called within this long and did not end counts as live. */
export const LIVE_MS = 10 * 60_000;
const RELAY_MS = 2 * 60_000;

export function runtimeFile(root: string): string {
  return join(root, ".cohent", "runtime.json");
}

export function emptySession(now = new Date()): SessionState {
  return {
    client: null,
    model: null,
    scope: [],
    explicitScope: false,
    touched: [],
    control: "active",
    controlReason: null,
    seenAt: now.toISOString(),
  };
}

export function readRuntime(root: string): Runtime {
  return load(root).rt;
}

/** The parsed file and the identity of what was read (inode, mtime, size), so a later write can tell whether it changed. */
function load(root: string): { rt: Runtime; stamp: string | null } {
  const stamp = stampOf(runtimeFile(root));
  try {
    const rt = JSON.parse(readFileSync(runtimeFile(root), "utf8")) as Runtime;
    if (rt && rt.version === 1 && rt.sessions && Array.isArray(rt.relays)) return { rt, stamp };
  } catch {
    /* missing or unreadable: start over */
  }
  return { rt: { version: 1, sessions: {}, relays: [] }, stamp };
}

function stampOf(file: string): string | null {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch {
    return null;
  }
}

export function writeRuntimeAtomic(root: string, rt: Runtime): void {
  const file = runtimeFile(root);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, JSON.stringify(rt, null, 1) + "\n");
  renameSync(tmp, file);
}

/**
 * Read, change and write runtime.json atomically under its lock; drops expired relays on the way.
 * `known` is a copy read earlier: when the file has not changed since (same stamp), it is not read again.
 */
export function updateRuntime<T>(
  root: string,
  change: (rt: Runtime) => T,
  known?: { rt: Runtime; stamp: string | null },
): T {
  mkdirSync(join(root, ".cohent"), { recursive: true });
  const unlock = lockFile(runtimeFile(root));
  try {
    const rt =
      known && stampOf(runtimeFile(root)) === known.stamp ? structuredClone(known.rt) : load(root).rt;
    const cutoff = Date.now() - RELAY_MS;
    rt.relays = rt.relays.filter((r) => Date.parse(r.at) > cutoff);
    const out = change(rt);
    writeRuntimeAtomic(root, rt);
    return out;
  } finally {
    unlock();
  }
}

/** seenAt is refreshed at most this often by calls that change nothing else: liveness needs minutes, not every call. */
const SEEN_EVERY_MS = 60_000;

/**
 * One process's view of one session: runtime.json read once, changes kept
 * as a patch, and written at most once by save(), merged under the lock
 * into whatever parallel hooks wrote meanwhile.
 */
export class SessionFile {
  readonly state: SessionState;
  private readonly patch: Partial<SessionState> = {};
  private readonly updates: ((s: SessionState) => void)[] = [];
  private readonly loaded: { rt: Runtime; stamp: string | null };
  private relay: Relay | null = null;
  private saved = false;

  /** `seed`: the state as the caller knows it, with no runtime.json (the backend's /mcp endpoint, which never saves). */
  constructor(
    readonly root: string,
    readonly id: string,
    seed?: SessionState,
  ) {
    this.loaded = seed ? { rt: { version: 1, sessions: {}, relays: [] }, stamp: null } : load(root);
    this.state = structuredClone(seed ?? this.loaded.rt.sessions[id] ?? emptySession());
  }

  get runtime(): Runtime {
    return this.loaded.rt;
  }

  /** Changes fields of this session; `undefined` removes one. */
  set(change: Partial<SessionState>): void {
    const state = this.state as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(change)) {
      if (JSON.stringify(state[k]) === JSON.stringify(v)) continue; // unchanged: nothing to write
      state[k] = v;
      (this.patch as Record<string, unknown>)[k] = v;
    }
  }

  /**
   * Changes fields from their current value (a counter, a set). Applied now,
   * and again at save() over what parallel hooks of the session wrote
   * meanwhile (a sub-agent's calls run beside its parent's), so none is lost.
   */
  update(change: (s: SessionState) => void): void {
    change(this.state);
    this.updates.push(change);
  }

  /** Leaves a relay for the command the hook saw (written with the session's changes). */
  leaveRelay(relay: Relay): void {
    this.relay = relay;
  }

  /** Writes the changes, once; a call that changed nothing writes only to keep the session live. */
  save(): void {
    if (this.saved) return;
    this.saved = true;
    const stale =
      Date.now() - Date.parse(this.state.seenAt) >= SEEN_EVERY_MS || !this.loaded.rt.sessions[this.id];
    if (Object.keys(this.patch).length === 0 && this.updates.length === 0 && !this.relay && !stale) return;
    updateRuntime(
      this.root,
      (rt) => {
        const s = (rt.sessions[this.id] ??= emptySession());
        for (const [k, v] of Object.entries(this.patch)) {
          if (v === undefined) delete (s as unknown as Record<string, unknown>)[k];
          else (s as unknown as Record<string, unknown>)[k] = v;
        }
        for (const change of this.updates) change(s);
        s.seenAt = new Date().toISOString();
        if (this.relay) rt.relays.push(this.relay);
      },
      this.loaded,
    );
  }
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
  return clean.length > 0 && clean.length <= 128
    ? clean
    : "h-" + crypto().createHash("sha256").update(id).digest("hex").slice(0, 40);
}

/** When the agent last published, and its intent then: a publish counts only once bound to an intent. */
export interface PublishMark {
  at: string;
  intentBefore: string | null;
}

/** The sub-agents of a Claude Code session the guard tracks (adapter/src/guard/subagents.ts). */
export interface Subagents {
  /** Sub-agents whose calls were seen (or a Stop listed as running) and that have not stopped. */
  ids: string[];
  /** Spawns allowed whose first call has not been seen yet. */
  pending: number;
  /** Background commands each sub-agent started, by agent id: one still running may wake it. */
  shells?: Record<string, string[]>;
  /** Sub-agents that stopped while a command of theirs still ran: Claude Code 2.1.332 wakes them when it ends. */
  parked?: string[];
  /** A Stop of the main agent arrived while these ran: run it when none can act any more. */
  stopHeld?: boolean;
}
