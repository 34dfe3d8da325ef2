import {
  restoreCommand,
  scopesOverlapping,
  type Overview,
  type Party,
  type ShellWriteView,
} from "@cohent/protocol";
import type { ShellWriteRow } from "../../store/index.js";
import { guardStatus } from "../../core/lease.js";
import type { Deps } from "../deps.js";
import { repoByName } from "../shared/repos.js";
import { listSessions } from "./admin.js";
import { alarmsOf, enforcementView } from "./enforcement.js";
import { pendingPairings } from "./pairing.js";

const NO_HOST = {
  tokenId: "",
  checkout: null,
  host: null,
  hostVersion: null,
  wiring: null,
  guardSeenAt: null,
};

/** The Control Room's read model of one repository's live page (the list: operations/people/repo-list). */

/** Per sub-agent of one intent: how many of its calls were refused, and the last refusal (rows come newest first). */
function subagentsOf(
  rows: { agentId: string; kind: string; at: Date }[],
): Overview["work"][number]["subagents"] {
  const by = new Map<string, { agentId: string; refusals: number; lastKind: string; lastAt: string }>();
  for (const r of rows) {
    const seen = by.get(r.agentId);
    if (seen) seen.refusals += 1;
    else by.set(r.agentId, { agentId: r.agentId, refusals: 1, lastKind: r.kind, lastAt: r.at.toISOString() });
  }
  return [...by.values()];
}

/** The shell writes the live page lists: the last day's, at most this many. */
const SHELL_WRITES = 20;

/** A caught shell write as the live page shows it; `party` names intents, the writer's own report names it otherwise. */
function shellWriteView(w: ShellWriteRow, party: (id: string) => Party): ShellWriteView {
  const d = w.detail;
  const named = w.intentId ? party(w.intentId) : null;
  const restorable = d?.restorable ?? false;
  return {
    id: w.id,
    at: w.at.toISOString(),
    writer:
      named && (named.person !== "unknown" || !d)
        ? { ...named, client: named.client ?? d?.client ?? null, model: named.model ?? d?.model ?? null }
        : {
            intentId: w.intentId,
            person: d?.person ?? "unknown",
            client: d?.client ?? null,
            model: d?.model ?? null,
            objective: null,
          },
    between: d?.between === true,
    agentId: w.agentId,
    command: d?.command ?? null,
    paths: w.paths,
    peers: (d?.peers ?? w.peerIds.map((intentId) => ({ intentId, paths: [] }))).map((p) => ({
      ...party(p.intentId),
      paths: p.paths,
    })),
    restorable,
    restore: restorable ? w.paths.map(restoreCommand) : [],
    restoreRequested: d?.restoreRequestedAt
      ? { at: d.restoreRequestedAt, by: d.restoreRequestedBy ?? "unknown" }
      : null,
  };
}

/** Everything the repository's live pages show, in one read. */
export async function repoOverview(deps: Deps, name: string): Promise<Overview> {
  const { store } = deps;
  const repo = await repoByName(store, name);
  const now = deps.clock();
  const open = await store.intents.open(repo.id);
  const commits = await store.intents.commits(open.map((r) => r.id));
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const catches = await store.reads.scopeCatches(repo.id, hourAgo);
  const subagentCatches = await store.reads.subagentCatches(repo.id, hourAgo);
  const decisions = await store.reads.overlapDecisions(repo.id, 50);
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const shellWrites = await store.reads.shellWrites(repo.id, dayAgo, SHELL_WRITES);

  // Parties named anywhere on the page, open or closed.
  const named = new Set(
    [...decisions, ...catches, ...shellWrites]
      .flatMap((d) => [d.intentId, ...d.peerIds])
      .concat(open.map((r) => r.id))
      .filter(Boolean),
  );
  const parties = new Map((await store.intents.parties([...named])).map((p) => [p.intentId, p]));
  const party = (id: string): Party =>
    parties.get(id) ?? { intentId: id, person: "unknown", client: null, model: null, objective: null };

  const wiring = await store.wiring.modified(repo.id);
  const sessions = await listSessions(deps, repo.name, alarmsOf(wiring));
  const bySession = new Map(sessions.map((s) => [s.id, s]));
  const live = open.map((r) => ({
    r,
    guard: guardStatus(r.session.lastSeenAt, now, deps.lease),
    paths: r.scope.length ? r.scope : r.promptPaths,
  }));
  // Every pair of live intents at once, through one index of their paths (and one matching budget).
  const current = live.filter((l) => l.guard !== "expired");
  const through = new Map<string, string[]>();
  for (const o of scopesOverlapping(
    current.map((l) => l.paths),
    { caseInsensitive: repo.caseInsensitive },
  )) {
    through.set(`${current[o.a]!.r.id} ${current[o.b]!.r.id}`, o.mine);
    through.set(`${current[o.b]!.r.id} ${current[o.a]!.r.id}`, o.theirs);
  }
  const work = live.map(({ r, guard }) => {
    const overlaps = current
      .filter((o) => o.r.id !== r.id && through.has(`${r.id} ${o.r.id}`))
      .map((o) => ({
        with: party(o.r.id),
        paths: through.get(`${r.id} ${o.r.id}`)!,
        claimed: r.scope.length > 0 && o.r.scope.length > 0,
      }));
    const collisions = catches
      .filter((c) => c.intentId === r.id || c.peerIds.includes(r.id))
      .map((c) => ({
        at: c.at.toISOString(),
        kind: c.kind,
        paths: c.paths,
        refused: party(c.intentId),
        agentId: c.agentId,
        holders: c.peerIds.map(party),
      }));
    const subagents = subagentsOf(subagentCatches.filter((c) => c.intentId === r.id));
    return {
      intentId: r.id,
      sessionId: r.sessionId,
      person: r.person,
      client: r.client,
      model: r.model,
      prompt: r.prompt.slice(0, 400),
      objective: r.record?.objective ?? null,
      outputs: r.record?.outputs ?? [],
      dependsOn: r.record?.dependsOn ?? [],
      capabilities: r.record?.capabilities ?? [],
      state: r.state,
      lastAction: r.lastAction,
      scope: r.scope,
      pathHints: r.promptPaths,
      overlaps,
      collisions,
      subagents,
      lastCheckpoint: r.lastCheckpoint,
      commits: commits.get(r.id) ?? [],
      guard,
      // Every open intent's session is the repository's (listed above); the fallback never shows in practice.
      enforcement: bySession.get(r.sessionId)?.enforcement ?? enforcementView(NO_HOST, new Map()),
      lastCallAt: r.session.lastSeenAt.toISOString(),
      control: r.session.control,
      controlReason: r.session.controlReason,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    };
  });

  const iso = (d: Date | null) => d?.toISOString() ?? null;
  const tokens = await store.reads.tokens(repo.id);
  return {
    repo: { name: repo.name, goal: repo.goal, createdAt: repo.createdAt.toISOString() },
    serverTime: now.toISOString(),
    work,
    decisions: decisions.map((d) => ({
      id: d.id,
      action: d.action,
      reason: d.reason,
      at: d.at,
      subject: party(d.intentId),
      peers: d.peerIds.map(party),
    })),
    commands: (await store.reads.commands(repo.id, 50)).map(({ at, ...c }) => ({
      ...c,
      at: at.toISOString(),
    })),
    sessions,
    tokens: tokens.map((t) => ({
      ...t,
      createdAt: t.createdAt.toISOString(),
      revokedAt: iso(t.revokedAt),
      lastCallAt: iso(t.lastCallAt),
    })),
    pairings: await pendingPairings(deps, repo.name),
    wiring: wiring.map((w) => {
      const token = tokens.find((t) => t.id === w.tokenId);
      return {
        ...w,
        person: token?.person ?? "unknown",
        machine: token?.machine ?? null,
        reportedAt: w.reportedAt.toISOString(),
      };
    }),
    shellWrites: shellWrites.map((w) => shellWriteView(w, party)),
  };
}

/** Changes whenever anything the console shows changes, whichever instance or CLI process wrote it. */
export const changeFingerprint = (deps: Deps): Promise<string> => deps.store.reads.fingerprint();
