import {
  hostDisplayName,
  isHost,
  REMOTE_WIRING,
  UNKNOWN_HOST,
  WIRINGS,
  type EnforcementView,
  type Wiring,
} from "@cohent/protocol";
import { enforcement } from "../../core/enforcement.js";
import type { Deps } from "../deps.js";

/** The open "guard wiring modified" alarms of a repository, by token and checkout: their files. */
export type Alarms = ReadonlyMap<string, string[]>;

export async function openAlarms(deps: Deps, repoId: string): Promise<Alarms> {
  return alarmsOf(await deps.store.wiring.modified(repoId));
}
export const alarmsOf = (
  rows: { tokenId: string; checkout: string; changes: { file: string }[] }[],
): Alarms => new Map(rows.map((r) => [`${r.tokenId}|${r.checkout}`, r.changes.map((c) => c.file)]));

interface SessionHost {
  tokenId: string;
  checkout: string | null;
  host: string | null;
  hostVersion: string | null;
  wiring: string | null;
  guardSeenAt: Date | null;
}

/** Whether the guard checks the session's tool calls, and why (core/enforcement), as the Control Room shows it. */
export function enforcementView(s: SessionHost, alarms: Alarms): EnforcementView {
  const verdict = enforcement({
    host: s.host,
    hostVersion: s.hostVersion,
    wiring: s.wiring,
    guardSeen: s.guardSeenAt !== null,
    modifiedFiles: (s.checkout && alarms.get(`${s.tokenId}|${s.checkout}`)) || null,
  });
  return {
    ...verdict,
    host: isHost(s.host) || s.host === UNKNOWN_HOST ? s.host : null,
    // A /mcp session has no hook to name its host: its client's name is on the session itself.
    hostName: s.wiring === REMOTE_WIRING ? "remote MCP client" : hostDisplayName(s.host),
    hostVersion: s.hostVersion,
    wiring:
      s.wiring === REMOTE_WIRING
        ? REMOTE_WIRING
        : (WIRINGS as readonly string[]).includes(s.wiring ?? "")
          ? (s.wiring as Wiring)
          : null,
    guardSeenAt: s.guardSeenAt?.toISOString() ?? null,
  };
}

/** The sessions that called since `since` (all without it), counted by level: the metrics' two figures. */
export async function sessionCounts(
  deps: Deps,
  repoId: string,
  since?: Date,
): Promise<{ guardedSessions: number; advisorySessions: number }> {
  const [sessions, alarms] = await Promise.all([
    deps.store.sessions.seenSince(repoId, since),
    openAlarms(deps, repoId),
  ]);
  let guarded = 0;
  for (const s of sessions) if (enforcementView(s, alarms).level === "guarded") guarded++;
  return { guardedSessions: guarded, advisorySessions: sessions.length - guarded };
}
