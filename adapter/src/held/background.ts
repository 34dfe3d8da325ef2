import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { scopeCovers } from "@cohent/protocol/paths";
import { ensureStash, stashDir, writeAtomic } from "./stash.js";

/**
 * The journal of shell calls that left a process running (`cmd &`, nohup,
 * setsid, a client's run-in-background flag), shared by the checkout's
 * sessions: <stash>/background.log. A change that no call explains,
 * noticed between calls (held/baseline.ts), is most likely such a job's:
 * when one session alone started jobs lately, it is named the writer, and
 * a change inside that session's own claim is its own work, not a catch.
 * Only names a writer: no decision rests on it.
 */

interface Line {
  /** Session. */
  s: string;
  /** Its claim when it started the job. */
  p: string[];
  t: number;
}

/** A job started longer ago than this is not named (a dev server keeps writing for hours: then "unknown"). */
const KEEP_MS = 30 * 60_000;
const COMPACT_BYTES = 64 * 1024;

const file = (root: string) => join(stashDir(root), "background.log");

/** Quoted text and the redirections that hold an & (2>&1, &>, >&2, |&, &&) out of the way. */
const bare = (command: string) =>
  command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, " ").replace(/\d*>&\d*-?|&>>?|\|&|&&/g, " ");

/** Does this shell command (or the client's flag) leave a process running after the call? Pure. */
export function startsBackground(command: string | null, input?: Record<string, unknown>): boolean {
  if (input?.run_in_background === true || input?.is_background === true) return true;
  if (!command) return false;
  const b = bare(command);
  return /&/.test(b) || /(^|[\s;|(])(nohup|setsid|disown|daemonize|start-stop-daemon)(\s|$)/.test(b);
}

/** Notes that this session's call started a background job. Never throws. */
export function noteBackground(
  root: string,
  sessionId: string,
  scope: readonly string[],
  at = Date.now(),
): void {
  const line = JSON.stringify({ s: sessionId, p: [...scope], t: at } satisfies Line) + "\n";
  try {
    try {
      appendFileSync(file(root), line);
    } catch {
      ensureStash(root);
      appendFileSync(file(root), line);
    }
    if ((statSync(file(root), { throwIfNoEntry: false })?.size ?? 0) > COMPACT_BYTES) {
      const kept = read(root).filter((l) => at - l.t <= KEEP_MS);
      writeAtomic(file(root), kept.map((l) => JSON.stringify(l) + "\n").join(""));
    }
  } catch {
    /* a writer left unnamed */
  }
}

function read(root: string): Line[] {
  let text: string;
  try {
    text = readFileSync(file(root), "utf8");
  } catch {
    return [];
  }
  const out: Line[] = [];
  for (const l of text.split("\n")) {
    if (!l) continue;
    try {
      const x = JSON.parse(l) as Line;
      if (typeof x.s === "string" && Array.isArray(x.p) && typeof x.t === "number") out.push(x);
    } catch {
      /* a torn line */
    }
  }
  return out;
}

/**
 * The likely writer of a change at `path` noticed at `now`: the one session
 * that started background jobs in the last 30 minutes, and whether the path
 * lies in its own claim. Null when none or several did.
 */
export function backgroundWriter(
  root: string,
  path: string,
  now: number,
): { session: string; own: boolean } | null {
  const recent = read(root).filter((l) => l.t <= now && now - l.t <= KEEP_MS);
  const sessions = new Set(recent.map((l) => l.s));
  if (sessions.size !== 1) return null;
  const session = [...sessions][0]!;
  const own = recent.some((l) => l.p.length > 0 && scopeCovers(l.p, path));
  return { session, own };
}
