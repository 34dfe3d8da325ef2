import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { BOUNDS } from "@cohent/protocol/bounds";
import type { WiringChange, WiringReport } from "@cohent/protocol";
import { crypto, os, reportWiring, type Checkout, updateRuntime, type Runtime } from "@cohent/client";
import { adapterFileHash } from "./init.js";
import { wiringChanges } from "./wiring.js";

/**
 * The wiring check at a session start (and in doctor): reads the guard's
 * files, compares them with what init wrote (wiring.ts), and tells the
 * service when they differ, so that the Control Room shows "guard wiring
 * modified" for this checkout. An intact checkout sends nothing, unless the
 * service still shows an earlier report of it (runtime.json remembers that),
 * which the intact report clears. Never throws and never refuses: a session
 * start goes on whatever this finds.
 */

/** A session start waits at most this long for the report; it is retried at the next one when it fails. */
export const WIRING_REPORT_TIMEOUT_MS = 1_500;

export interface WiringState {
  /** null: not a checkout written by an init that records its adapter; nothing to compare. */
  changes: WiringChange[] | null;
}

function readRel(root: string, rel: string): Buffer | null {
  try {
    return readFileSync(join(root, rel));
  } catch {
    return null;
  }
}

/** The files of a folder of the checkout; null when there is none. */
function listRel(root: string, rel: string): string[] | null {
  try {
    return readdirSync(join(root, rel), { withFileTypes: true })
      .filter((e) => !e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return null;
  }
}

/** Opaque and stable: this machine and this checkout's directory (two checkouts on one machine share a credential). */
export function checkoutId(root: string): string {
  let dir = root;
  try {
    dir = realpathSync(root); // the hooks run the adapter by a path node resolved; doctor may start from a symlink
  } catch {
    /* the path as given */
  }
  return crypto().createHash("sha256").update(`${os().hostname()}\0${dir}`).digest("hex").slice(0, 32);
}

/** What tells a file changed without reading it: inode, size, mtime and ctime (which no user can set back). */
function statKey(file: string): string | null {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return null;
  }
}

/**
 * Reads the wiring and compares it with what init wrote. The adapter files'
 * hashes come from runtime.json while each file's stat is the one they were
 * computed for: a session start then loads no node:crypto (10 ms and more
 * in a fresh process) and reads none of the adapter's 430 KB. A file that
 * changed in any way (ctime moves with every write and rename) is hashed.
 */
export function readWiring(root: string, rt?: Runtime): WiringState {
  const cache = rt?.wiringHashes ?? {};
  const computed: NonNullable<Runtime["wiringHashes"]> = {};
  const hashOf = (rel: string): string | null => {
    const key = statKey(join(root, rel));
    if (key === null) return null;
    if (cache[rel]?.stat === key) return cache[rel].hash;
    const b = readRel(root, rel);
    if (b === null) return null;
    const hash = adapterFileHash(b);
    computed[rel] = { stat: key, hash };
    return hash;
  };
  let changes: WiringChange[] | null;
  try {
    changes = wiringChanges(
      (rel) => readRel(root, rel),
      root,
      hashOf,
      (dir) => listRel(root, dir),
    );
  } catch {
    changes = [{ file: ".cohent/project.json", change: "wiring unreadable" }];
  }
  if (rt && Object.keys(computed).length) {
    try {
      updateRuntime(root, (r) => {
        r.wiringHashes = { ...r.wiringHashes, ...computed };
      });
    } catch {
      /* hashed again next time */
    }
  }
  return { changes };
}

/** Whether the service should hear this state: every modified one, and an intact one while it shows an earlier report. */
export function shouldReport(state: WiringState, rt: Runtime): boolean {
  if (state.changes === null) return false;
  return state.changes.length > 0 || rt.wiring !== undefined;
}

/**
 * Sends the state when it should be heard, and remembers what the service
 * accepted. Returns whether the service has this checkout's state now
 * (false: nothing sent, or the send failed).
 */
export async function reportState(
  root: string,
  checkout: Checkout | null,
  sessionId: string,
  tool: string,
  state: WiringState,
  rt: Runtime,
  opts: { always?: boolean; timeoutMs?: number } = {},
): Promise<boolean> {
  if (state.changes === null || !checkout) return false;
  if (!opts.always && !shouldReport(state, rt)) return false;
  const report: WiringReport = {
    checkout: checkoutId(root),
    changes: state.changes.slice(0, BOUNDS.wiringChanges).map((c) => ({
      file: c.file,
      change: c.change.slice(0, BOUNDS.wiringPhraseChars),
    })),
  };
  const env = await reportWiring(
    checkout,
    sessionId,
    tool,
    report,
    opts.timeoutMs ?? WIRING_REPORT_TIMEOUT_MS,
  ).catch(() => null);
  if (!env?.ok) return false;
  const modified = report.changes.length > 0;
  if ((rt.wiring !== undefined) !== modified)
    updateRuntime(root, (r) => {
      if (modified) r.wiring = { reportedAt: new Date().toISOString() };
      else delete r.wiring;
    });
  return true;
}
