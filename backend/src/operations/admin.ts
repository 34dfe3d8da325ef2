import { CohentError } from "@cohent/protocol";
import { z } from "zod";
import { hashToken, newId, newToken } from "../ids.js";
import { guardStatus } from "../lease.js";
import type { Tx } from "../store/db.js";
import type { Deps } from "./deps.js";
import { addEvent, lockRepository } from "./journal.js";

/**
 * Operations for people (the admin CLI now, the Control Room later): the
 * same layer, with a human actor instead of an agent session.
 */

export const RepoName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, "repositories are named owner/name");
export const Goal = z.string().max(2_000);
export const Person = z.string().trim().min(1).max(64);
export const ControlKind = z.enum(["pause", "cancel", "resume"]);
export type ControlKind = z.infer<typeof ControlKind>;

async function repoByName(tx: Tx, name: string) {
  const repo = await tx.repository.findUnique({ where: { name: RepoName.parse(name) } });
  if (!repo) throw new CohentError("REPOSITORY_NOT_FOUND", `No repository ${name}; add it with: cohent repo add ${name}`);
  return repo;
}

export async function addRepo(deps: Deps, input: { name: string; goal?: string; caseInsensitive?: boolean }) {
  const name = RepoName.parse(input.name);
  const goal = Goal.parse(input.goal ?? "");
  return deps.db.tx(async (tx) => {
    if (await tx.repository.findUnique({ where: { name } })) throw new CohentError("REPOSITORY_EXISTS");
    return tx.repository.create({ data: { id: newId("rep"), name, goal, caseInsensitive: !!input.caseInsensitive, createdAt: deps.clock() } });
  });
}

export async function setGoal(deps: Deps, name: string, goal: string) {
  return deps.db.tx(async (tx) => {
    const repo = await repoByName(tx, name);
    return tx.repository.update({ where: { id: repo.id }, data: { goal: Goal.parse(goal) } });
  });
}

/** Issues an agent token for one repository. The secret is returned once and only its hash is stored. */
export async function issueToken(deps: Deps, input: { repo: string; person: string; client?: string }) {
  const person = Person.parse(input.person);
  return deps.db.tx(async (tx) => createAgentToken(tx, deps, { repo: await repoByName(tx, input.repo), person, client: input.client ?? null }));
}

/** The token-issuing step of issueToken, inside a caller's transaction (pairing issues its token this way). */
export async function createAgentToken(tx: Tx, deps: Deps, input: { repo: { id: string; name: string }; person: string; client: string | null }) {
  const person = Person.parse(input.person);
  const token = newToken();
  const row = await tx.agentToken.create({
    data: { id: newId("tok"), repoId: input.repo.id, person, client: input.client, tokenHash: hashToken(token), createdAt: deps.clock() },
  });
  return { id: row.id, token, repo: input.repo.name, person };
}

export async function revokeToken(deps: Deps, tokenId: string) {
  return deps.db.tx(async (tx) => {
    const row = await tx.agentToken.findUnique({ where: { id: tokenId } });
    if (!row) throw new CohentError("UNAUTHENTICATED", "No such token.");
    return tx.agentToken.update({ where: { id: tokenId }, data: { revokedAt: row.revokedAt ?? deps.clock() } });
  });
}

export async function listSessions(deps: Deps, repoName: string) {
  return deps.db.tx(async (tx) => {
    const repo = await repoByName(tx, repoName);
    const sessions = await tx.session.findMany({
      where: { repoId: repo.id },
      include: { token: { select: { person: true } }, intents: { where: { closedAt: null }, select: { id: true, state: true, lastAction: true } } },
      orderBy: { lastSeenAt: "desc" },
    });
    const now = deps.clock();
    return sessions.map((s) => ({
      id: s.id, key: s.key, person: s.token.person, client: s.client, model: s.model, control: s.control,
      guard: guardStatus(s.lastSeenAt, now, deps.lease), lastSeenAt: s.lastSeenAt.toISOString(), intents: s.intents,
    }));
  });
}

const CONTROL_STATE: Record<ControlKind, string> = { pause: "paused", cancel: "cancelled", resume: "active" };

/** Stores a human command on the session; the session reads it on its next call. */
export async function controlSession(deps: Deps, input: { sessionId: string; kind: ControlKind; actor: string; reason?: string }) {
  const kind = ControlKind.parse(input.kind);
  return deps.db.tx(async (tx) => {
    const session = await tx.session.findUnique({ where: { id: input.sessionId } });
    if (!session) throw new CohentError("SESSION_NOT_FOUND");
    await lockRepository(tx, session.repoId);
    const now = deps.clock();
    const reason = input.reason ?? (kind === "resume" ? null : `${kind === "pause" ? "Paused" : "Cancelled"} by ${input.actor} from the Control Room.`);
    const updated = await tx.session.update({ where: { id: session.id }, data: { control: CONTROL_STATE[kind], controlReason: reason } });
    await tx.command.create({ data: { id: newId("cmd"), repoId: session.repoId, sessionId: session.id, kind, actor: input.actor, reason, createdAt: now } });
    const open = await tx.intent.findFirst({ where: { sessionId: session.id, closedAt: null }, select: { id: true } });
    await addEvent(tx, deps, { repoId: session.repoId, intentId: open?.id ?? "", kind: "control", summary: `${kind} by ${input.actor}` });
    return { id: updated.id, control: updated.control, reason };
  });
}

/** Guard catches that stopped a write on its paths (the others are kill-switch and intent refusals). */
export const PATH_CATCH_KINDS = ["scope-conflict", "outside-scope"];

export interface Metrics {
  repo: string;
  since: string | null;
  potentialOverlaps: number;
  redirections: number;
  pathGuardCatches: number;
  guardRefusals: number;
  packets: number;
  packetTokens: number;
  injectedChars: number;
  dependencyWaits: number;
  humanCommands: number;
}

/**
 * Derived coordination metrics (never billing):
 * - potentialOverlaps: decisions that named a peer (wait, duplicate, handoff, parallel) plus refused claims;
 * - redirections: pre-edit redirections (wait, duplicate, handoff);
 * - pathGuardCatches: writes stopped on paths: claims refused for an overlapping peer scope (counted by the
 *   server) and writes outside the declared scope (reported by the adapter);
 * - guardRefusals: every refusal the guard reported, path or not (edits before an intent, kill switch, …);
 * - packets, packetTokens, injectedChars (acknowledged characters);
 * - dependencyWaits: wait decisions; humanCommands: pause, cancel and resume.
 */
export async function metrics(deps: Deps, repoName: string, since?: Date): Promise<Metrics> {
  return deps.db.tx(async (tx) => {
    const repo = await repoByName(tx, repoName);
    const at = since ? { gte: since } : undefined;
    const where = { repoId: repo.id, ...(at ? { createdAt: at } : {}) };
    const count = (actions: string[]) => tx.decision.count({ where: { ...where, action: { in: actions } } });
    const [peerDecisions, redirections, catches, refusals, packets, waits, commands] = await Promise.all([
      count(["wait", "duplicate", "handoff", "parallel"]),
      count(["wait", "duplicate", "handoff"]),
      tx.guardCatch.count({ where: { ...where, kind: { in: PATH_CATCH_KINDS } } }),
      tx.guardCatch.count({ where }),
      tx.packet.aggregate({ where, _count: true, _sum: { tokens: true, ackedChars: true } }),
      count(["wait"]),
      tx.command.count({ where }),
    ]);
    return {
      repo: repo.name, since: since?.toISOString() ?? null, potentialOverlaps: peerDecisions + catches, redirections,
      pathGuardCatches: catches, guardRefusals: refusals, packets: packets._count, packetTokens: packets._sum.tokens ?? 0,
      injectedChars: packets._sum.ackedChars ?? 0, dependencyWaits: waits, humanCommands: commands,
    };
  });
}
