import { scopeCovers } from "@cohent/protocol/paths";
import type { PeerScope } from "../git/git-guard.js";
import * as client from "@cohent/client/service/client.js";
import type { SessionFile } from "@cohent/client/state/runtime.js";
import { GUARD_FILES } from "./guard-files.js";
import {
  compareHeld,
  explainedBy,
  noteEdit,
  recordCatch,
  savePending,
  snapshotHeld,
  takePending,
  type HeldChange,
} from "./held-files.js";

/**
 * The check after a call, around the calls Cohent cannot read whole (a
 * shell command, an opaque MCP tool): before it runs, what lies under the
 * held paths (the peers' claims, the guard's own files) is kept
 * (held-files.ts); after it, a change that no guarded call of the holder's
 * explains is a write caught. The caller tells the model, the service and
 * the peer; `node .cohent/cohent.mjs restore PATH` puts the bytes back.
 */

/** The guard's own files as held paths. */
const GUARD_PATHS = GUARD_FILES.map((f) => f.path);

/** A pending call's peers, kept with its snapshot so that the check after it names them without asking the service again. */
interface CallMeta {
  tool: string;
  command: string | null;
  at: number;
  peers: PeerScope[];
}

/** Before an allowed call: keeps what lies under the peers' claims and the guard's files. */
export function watchCall(
  root: string,
  s: SessionFile,
  callKey: string | null,
  meta: { tool: string; command: string | null; peers: PeerScope[] },
): void {
  const held = [...new Set([...meta.peers.flatMap((p) => p.paths), ...GUARD_PATHS])];
  const snap = snapshotHeld(root, held);
  const peers = meta.peers.filter((p) => p.paths.length > 0);
  savePending(root, s.id, callKey, snap, { ...meta, peers, at: Date.now() } satisfies CallMeta);
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
  peers: { peer: PeerScope; paths: string[] }[];
  /** Changed guard files (no peer's: everybody's). */
  guardFiles: string[];
  restorable: boolean;
}

/** After a call: the writes caught under the held paths, recorded for `restore`; null when none (or no call was watched). */
export function closeCall(
  root: string,
  s: SessionFile,
  callKey: string | null,
  ended = Date.now(),
): Caught | null {
  const pending = takePending(root, s.id, callKey) ?? (callKey ? takePending(root, s.id, null) : null);
  if (!pending) return null;
  const meta = pending.meta as CallMeta;
  const changes = compareHeld(root, pending.snap).filter(
    (c) => explainedBy(root, c.path, meta.at, ended, s.id) === null,
  );
  if (changes.length === 0) return null;
  const peers = (meta.peers ?? [])
    .map((peer) => ({ peer, paths: changes.map((c) => c.path).filter((p) => scopeCovers(peer.paths, p)) }))
    .filter((x) => x.paths.length > 0);
  const guardFiles = changes.map((c) => c.path).filter((p) => scopeCovers(GUARD_PATHS, p));
  const rec = recordCatch(root, {
    sessionId: s.id,
    tool: meta.tool,
    command: meta.command,
    changes,
    peers: peers.flatMap((x) =>
      x.paths.map((path) => ({ path, intentId: x.peer.intentId, person: x.peer.person })),
    ),
    at: ended,
  });
  return {
    id: rec.id,
    tool: meta.tool,
    command: meta.command,
    changes,
    peers,
    guardFiles,
    restorable: changes.every((c) => c.restorable),
  };
}

/** Reports a caught write to the service (its peers get a notice; the Control Room shows it). Best effort: the model is told either way. */
export async function reportCaught(
  checkout: client.Checkout | null,
  s: SessionFile,
  c: Caught,
): Promise<void> {
  if (!checkout) return;
  await client
    .reportGuard(checkout, s, {
      kind: "shell-write",
      tool: c.tool,
      paths: c.changes.map((x) => x.path),
      caught: {
        command: c.command,
        peers: c.peers.map(({ peer, paths }) => ({ intentId: peer.intentId, paths })),
        restorable: c.restorable,
      },
    })
    .catch(() => undefined);
}
