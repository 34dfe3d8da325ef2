import { scopeCovers } from "@cohent/protocol/paths";
import type { PeerScope } from "../git/git-guard.js";
import { type SessionFile, type Checkout, reportGuard } from "@cohent/client";
import { ignoredPaths } from "../git/ignored.js";
import { GUARD_FILES } from "../guard/guard-files.js";
import { backgroundWriter } from "./background.js";
import { compareWithBaseline, heldOf, holdersOf, readBaseline, type Claim } from "./baseline.js";
import { diffSnapshots } from "./diff.js";
import {
  explainedBy,
  noteEdit,
  recordCatch,
  restoreHeld,
  savePending,
  snapshotHeld,
  takePending,
} from "./files.js";
import { inFlightHeld, takeAllPending, type PendingMeta } from "./pending.js";
import { snapshotOutside, undoOutside, type OutsideChange, type OutsideState } from "./outside.js";
import type { HeldChange, HeldSnapshot } from "./snapshot.js";
import { getObject, stashDir } from "./stash.js";
import { claimsOf } from "./walk.js";
import { currentView, liveViewOn } from "./live.js";
import { userSettingsFiles } from "../guard/host-settings.js";
import { recordShellSnapshot, recordShellWrites } from "../guard/read-shell.js";
import { isJsonSettings, touchesGuard } from "./settings-change.js";

/**
 * The watch, around every call Cohent cannot read whole (a shell command,
 * an opaque MCP tool) and between calls:
 * - before such a call, what lies under every live claim and the guard's
 *   own files is kept (held/snapshot.ts), and the clients' settings outside
 *   the checkout (held/outside.ts);
 * - after it, a change under a peer's claim that no guarded call of the
 *   holder's explains is a write caught; a change to the guard's files is
 *   put back at once and pauses the session;
 * - at every guarded call of any session, the state found is compared with
 *   the checkout's last known one (held/baseline.ts): a change no call
 *   explains (a background job, a process outside any agent) is caught too,
 *   its writer named where the journal can tell.
 * The caller tells the model, the service and the holder; `node
 * .cohent/cohent.mjs restore PATH` puts the bytes back.
 */

/** The guard's own files as held paths. */
const GUARD_PATHS = GUARD_FILES.map((f) => f.path);
const isGuardPath = (p: string) => scopeCovers(GUARD_PATHS, p);

type Env = Readonly<Record<string, string | undefined>>;

/** A pending call's peers, kept with its snapshot so that the check after it names them without asking the service again. */
interface CallMeta extends PendingMeta {
  peers: PeerScope[];
  /** The guard's files outside the checkout before the call. */
  outside?: OutsideState;
}

/** The snapshot this call's first look took (caughtBefore), so that the watch of the same call does not walk again. */
const thisCall = new WeakMap<SessionFile, HeldSnapshot>();

/** Every live claim: the peers' and this session's own. */
function claimsWith(s: SessionFile, peers: readonly PeerScope[]): Claim[] {
  const own = s.state.intentId ? [{ intentId: s.state.intentId, person: "", paths: s.state.scope }] : [];
  return [...peers.map((p) => ({ intentId: p.intentId, person: p.person, paths: p.paths })), ...own];
}

const sameHeld = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** This call's earlier snapshot when it covers exactly `held`, else null. */
function earlier(s: SessionFile, held: readonly string[]): HeldSnapshot | null {
  const memo = thisCall.get(s);
  return memo && sameHeld(memo.held, claimsOf(held)) ? memo : null;
}

/** Before an allowed watched call: keeps what lies under every claim and the guard's files, in and out of the checkout. */
export async function watchCall(
  root: string,
  s: SessionFile,
  callKey: string | null,
  meta: { tool: string; command: string | null; cwd?: string | null; peers: PeerScope[] },
  env: Env = process.env,
): Promise<Caught | null> {
  const claims = claimsWith(s, meta.peers);
  const held = heldOf(claims, GUARD_PATHS);
  const memo = earlier(s, held);
  const snap = memo ?? snapshotHeld(root, held, { view: await currentView() });
  // The held files the command names are what this session now read (stale-write.ts): `cat`, `sed -n`.
  recordShellSnapshot(root, s.id, meta.command, meta.cwd ?? null, snap.files, snap.at);
  // Compared with the baseline already when this call's first look took the same snapshot.
  const between = memo ? null : await noticeBetween(root, s, snap, claims);
  const peers = meta.peers.filter((p) => p.paths.length > 0);
  const outside = snapshotOutside(root, userSettingsFiles(env));
  // From the snapshot's time: what this process did since (a restore a notice asked for) is in the window.
  const { cwd: _cwd, ...kept } = meta;
  savePending(root, s.id, callKey, snap, { ...kept, peers, outside, at: snap.at } satisfies CallMeta, {
    later: liveViewOn(),
  });
  return between;
}

/** An allowed call's own writes under way (its targets, or a shell call's whole scope): a peer's check after its call does not blame them on it. */
export function noteCall(root: string, s: SessionFile, paths: string[]): void {
  if (paths.length === 0) return;
  try {
    noteEdit(root, s.id, [...new Set(paths)], "start");
  } catch {
    /* the journal only spares a peer a false report */
  }
}

/** The end of this session's call: its writes are no longer under way. */
export function endCall(root: string, s: SessionFile): void {
  try {
    noteEdit(root, s.id, [], "end");
  } catch {
    /* see noteCall */
  }
}

export interface Caught {
  id: string;
  tool: string;
  command: string | null;
  changes: HeldChange[];
  /** Each peer whose claim covers changed paths, with those paths. */
  peers: { peer: Pick<PeerScope, "intentId" | "person" | "client" | "model">; paths: string[] }[];
  /** Changed guard files (no peer's: everybody's), in the checkout. */
  guardFiles: string[];
  restorable: boolean;
  /** Guard files (in the checkout or the clients' settings outside it) the call changed, put back at once. */
  undone: OutsideChange[];
  /** Noticed between calls: no call of this session's made it. `writer` names the likely one where the journal can tell. */
  between?: { since: number; writer: string | null };
}

/**
 * Changes outside what Git ignores: build output, logs and caches in a held
 * folder are nobody's work, as they are not held before a call either
 * (guard-shell.ts). Git is asked only when something changed.
 */
async function notIgnored(root: string, changes: HeldChange[]): Promise<HeldChange[]> {
  const asked = changes.filter((c) => !isGuardPath(c.path)).map((c) => c.path);
  if (asked.length === 0) return changes;
  const ignored = await ignoredPaths(root, asked);
  return ignored.size ? changes.filter((c) => !ignored.has(c.path)) : changes;
}

/** The bytes' text of a kept version, for the settings comparison. */
const textOf = (root: string, key: string | null) => {
  if (!key) return null;
  return getObject(stashDir(root), key)?.toString("utf8") ?? null;
};

/** A change to a client's settings that leaves the guard's keys alone (a person's granted permission) is no catch. */
function harmless(root: string, c: HeldChange, now: HeldSnapshot): boolean {
  if (!isJsonSettings(c.path)) return false;
  const before = c.before === null ? null : textOf(root, c.before);
  const afterKey = now.files.find((f) => f.path === c.path)?.key ?? null;
  const after = c.change === "deleted" ? null : textOf(root, afterKey);
  if ((c.before !== null && before === null) || (c.change !== "deleted" && after === null)) return false;
  return !touchesGuard(before, after, true);
}

/** Records a catch of these changes, puts the guard files among them back at once, and words it for the caller. */
function judged(
  root: string,
  s: SessionFile,
  changes: HeldChange[],
  claims: readonly Pick<PeerScope, "intentId" | "person" | "client" | "model" | "paths">[],
  o: {
    tool: string;
    command: string | null;
    at: number;
    outside: OutsideChange[];
    between?: Caught["between"];
  },
): Caught | null {
  if (changes.length === 0 && o.outside.length === 0) return null;
  const peers = claims
    .map((peer) => ({ peer, paths: changes.map((c) => c.path).filter((p) => scopeCovers(peer.paths, p)) }))
    .filter((x) => x.paths.length > 0);
  const guardFiles = changes.map((c) => c.path).filter(isGuardPath);
  const rec = recordCatch(root, {
    sessionId: o.between ? `between:${o.between.writer ?? "unknown"}` : s.id,
    tool: o.tool,
    command: o.command,
    changes,
    peers: peers.flatMap((x) =>
      x.paths.map((path) => ({ path, intentId: x.peer.intentId, person: x.peer.person })),
    ),
    at: o.at,
  });
  const undone = [...o.outside];
  // The guard's files are put back now, not by the model's restore: a switch must not outlive the call.
  for (const p of guardFiles) {
    const r = restoreHeld(root, p, { catchId: rec.id, force: true });
    undone.push({
      path: p,
      change: changes.find((c) => c.path === p)!.change,
      undone: r.restored.includes(p),
    });
  }
  return {
    id: rec.id,
    tool: o.tool,
    command: o.command,
    changes: changes.filter((c) => !isGuardPath(c.path)),
    peers,
    guardFiles: [],
    restorable: changes.every((c) => c.restorable),
    undone,
    ...(o.between ? { between: o.between } : {}),
  };
}

/** A watched call's own check: what it changed under its peers' claims and the guard's files since its snapshot. */
async function judgeCall(
  root: string,
  s: SessionFile,
  pending: { snap: HeldSnapshot; meta: PendingMeta },
  now: HeldSnapshot,
  ended: number,
  env: Env,
): Promise<Caught | null> {
  const meta = pending.meta as CallMeta;
  const peers = meta.peers ?? [];
  const diff = diffSnapshots(pending.snap, now);
  // What the call changed that no other session's guarded edit explains is this session's own write (stale-write.ts).
  recordShellWrites(
    root,
    s,
    diff.filter((c) => !isGuardPath(c.path) && explainedBy(root, c.path, meta.at, ended, s.id) === null),
    ended,
  );
  const changes = await notIgnored(
    root,
    diff.filter(
      (c) =>
        (isGuardPath(c.path) || peers.some((p) => scopeCovers(p.paths, c.path))) &&
        explainedBy(root, c.path, meta.at, ended, s.id) === null &&
        !harmless(root, c, now),
    ),
  );
  const outside = meta.outside ? undoOutside(root, meta.outside, userSettingsFiles(env)) : [];
  return judged(root, s, changes, peers, { tool: meta.tool, command: meta.command, at: ended, outside });
}

/** Changes since the checkout's last known state that no call explains, as a catch (held/baseline.ts). */
async function noticeBetween(
  root: string,
  s: SessionFile,
  now: HeldSnapshot,
  claims: Claim[],
  exclude: ReadonlySet<string> = new Set(),
  /** Calls of this session still running are in flight too (a look from outside any call). */
  outside = false,
): Promise<Caught | null> {
  let others: string[] | null = null;
  const found = compareWithBaseline(root, now, claims, (path) => {
    if (exclude.has(path)) return true;
    others ??= inFlightHeld(root, outside ? "" : s.id, now.at);
    return others.length > 0 && scopeCovers(others, path);
  });
  if (!found || found.changes.length === 0) return null;
  // What lies under a claim. The guard's own files changed between calls are a person's (init --upgrade, a
  // setting edited by hand) as often as not: never put back here; the wiring check at a session start tells.
  const changes = await notIgnored(
    root,
    found.changes.filter((c) => !isGuardPath(c.path) && holdersOf(found.claims, c.path).length > 0),
  );
  // A job the holder started itself, writing inside its own claim, is its own work.
  const guessed = changes.map((c) => ({ c, w: backgroundWriter(root, c.path, now.at) }));
  const left = guessed.filter((x) => !x.w?.own);
  if (left.length === 0) return null;
  const writers = new Set(left.map((x) => x.w?.session ?? null));
  const writer = writers.size === 1 ? [...writers][0]! : null;
  return judged(
    root,
    s,
    left.map((x) => x.c),
    found.claims.map((c) => ({ ...c, client: null, model: null })),
    { tool: "unknown", command: null, at: now.at, outside: [], between: { since: found.since, writer } },
  );
}

/** The held paths the checkout's last known state covers (every live claim as last seen, the guard's files). */
function knownHeld(root: string): { held: string[]; claims: Claim[] } {
  const claims = readBaseline(root)?.claims ?? [];
  return { held: heldOf(claims, GUARD_PATHS), claims };
}

/**
 * After a call (PostToolUse): its own check when it was watched, then the
 * comparison with the checkout's last known state. At a PreToolUse
 * (`callKey` undefined): every call of this session whose PostToolUse never
 * came is checked, whatever its id, then the same comparison. Never throws
 * but where recordCatch does (the stash cannot be written).
 */
export async function closeCalls(
  root: string,
  s: SessionFile,
  callKey: string | null | undefined,
  env: Env = process.env,
  ended = Date.now(),
): Promise<Caught[]> {
  const pendings =
    callKey === undefined
      ? takeAllPending(root, s.id)
      : [takePending(root, s.id, callKey) ?? (callKey ? takePending(root, s.id, null) : null)].filter(
          (x) => x !== null,
        );
  const known = knownHeld(root);
  const held = [...known.held, ...pendings.flatMap((p) => p.snap.held)];
  const now = earlier(s, held) ?? snapshotHeld(root, held, { view: await currentView() });
  if (callKey === undefined) thisCall.set(s, now);
  const out: Caught[] = [];
  const reported = new Set<string>();
  for (const p of pendings) {
    const c = await judgeCall(root, s, p, now, ended, env);
    if (!c) continue;
    out.push(c);
    for (const x of c.changes) reported.add(x.path);
    for (const x of c.undone) reported.add(x.path);
  }
  const between = await noticeBetween(root, s, now, known.claims, reported);
  if (between) out.push(between);
  return out;
}

/**
 * A look between calls, from a long-lived guard process while no call runs
 * (hook-in-process.ts): the comparison with the checkout's last known state
 * alone, so that a write is noticed when it happens, also in a session
 * whose client no longer calls its hooks. Every call still running, this
 * session's included, judges its own writes.
 */
export async function lookBetween(root: string, s: SessionFile): Promise<Caught | null> {
  const known = knownHeld(root);
  if (known.claims.length === 0) return null;
  const now = snapshotHeld(root, known.held, { view: await currentView() });
  return noticeBetween(root, s, now, known.claims, new Set(), true);
}

/** Reports a caught write to the service (its peers get a notice; the Control Room shows it). Best effort: the model is told either way. */
export async function reportCaught(checkout: Checkout | null, s: SessionFile, c: Caught): Promise<void> {
  if (!checkout || c.changes.length === 0) return;
  await reportGuard(checkout, s, {
    kind: "shell-write",
    tool: c.tool,
    paths: c.changes.map((x) => x.path),
    caught: {
      // Between calls there is no command: the writer's session, where the journal names one.
      command: c.between
        ? c.between.writer
          ? `(a background job of session ${c.between.writer})`
          : null
        : c.command,
      peers: c.peers.map(({ peer, paths }) => ({ intentId: peer.intentId, paths })),
      restorable: c.restorable,
      ...(c.between ? { between: true } : {}),
    },
  }).catch(() => undefined);
}
