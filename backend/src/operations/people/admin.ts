import {
  BOUNDS,
  CohentError,
  CONTROL_STATE,
  ControlKind,
  Goal,
  Person,
  RepoName,
  type ControlResult,
  type SessionView,
} from "@cohent/protocol";
import { guardStatus } from "../../core/lease.js";
import { hashToken, newId, newSecret } from "../../ids.js";
import type { Repo, Tx } from "../../store/index.js";
import type { Deps } from "../deps.js";
import { freeText, goalText, reasonText } from "../shared/free-text.js";
import { dropWaiter, grantQueue, loseClaim } from "../shared/queue.js";
import { enforcementView, openAlarms, type Alarms } from "./enforcement.js";
import { repoByName } from "../shared/repos.js";

/**
 * Operations for people (the admin CLI and the Control Room): the same
 * layer as the agent's, with a human actor instead of an agent session.
 */

export { metrics } from "./metrics.js";

export async function addRepo(
  deps: Deps,
  input: { name: string; goal?: string; caseInsensitive?: boolean },
): Promise<Repo> {
  const name = RepoName.parse(input.name);
  const goal = goalText(Goal.parse(input.goal ?? ""));
  return deps.store.tx(async (t) => {
    if (await t.repos.byName(name)) throw new CohentError("REPOSITORY_EXISTS");
    return t.repos.create({
      id: newId("rep"),
      name,
      goal,
      caseInsensitive: !!input.caseInsensitive,
      createdAt: deps.clock(),
    });
  });
}

export async function setGoal(deps: Deps, name: string, goal: string): Promise<Repo> {
  return deps.store.tx(async (t) =>
    t.repos.setGoal((await repoByName(t, name)).id, goalText(Goal.parse(goal))),
  );
}

/** Issues an agent token for one repository. The secret is returned once and only its hash is stored. */
export async function issueToken(deps: Deps, input: { repo: string; person: string; client?: string }) {
  const person = Person.parse(input.person);
  return deps.store.tx(async (t) =>
    createAgentToken(t, deps, {
      repo: await repoByName(t, input.repo),
      person,
      client: input.client === undefined ? null : freeText(input.client, BOUNDS.identityChars),
    }),
  );
}

/** The token-issuing step of issueToken, inside a caller's transaction (pairing issues its token this way). */
export async function createAgentToken(
  t: Tx,
  deps: Deps,
  input: { repo: { id: string; name: string }; person: string; client: string | null },
) {
  const person = Person.parse(input.person);
  const token = newSecret("coh");
  const id = newId("tok");
  await t.tokens.create({
    id,
    repoId: input.repo.id,
    person,
    client: input.client,
    tokenHash: hashToken(token),
    at: deps.clock(),
  });
  return { id, token, repo: input.repo.name, person };
}

export async function revokeToken(deps: Deps, tokenId: string) {
  return deps.store.tx(async (t) => {
    if (!(await t.tokens.get(tokenId))) throw new CohentError("UNAUTHENTICATED", "No such token.");
    return t.tokens.revoke(tokenId, deps.clock());
  });
}

export async function listSessions(deps: Deps, repoName: string, known?: Alarms): Promise<SessionView[]> {
  const repo = await repoByName(deps.store, repoName);
  const now = deps.clock();
  const alarms = known ?? (await openAlarms(deps, repo.id));
  return (await deps.store.sessions.ofRepo(repo.id)).map((s) => ({
    id: s.id,
    key: s.key,
    person: s.person,
    client: s.client,
    model: s.model,
    control: s.control,
    controlReason: s.control === "active" ? null : s.controlReason,
    guard: guardStatus(s.lastSeenAt, now, deps.lease),
    enforcement: enforcementView(s, alarms),
    lastSeenAt: s.lastSeenAt.toISOString(),
    intents: s.intents,
  }));
}

/**
 * Stores a human command on the session; the session reads it on its next call.
 * A cancel also frees, at once, the scopes and queue entries of the session's
 * open intents (each told once), and grants the queue.
 */
export async function controlSession(
  deps: Deps,
  input: { sessionId: string; kind: ControlKind; actor: string; reason?: string },
): Promise<ControlResult> {
  const kind = ControlKind.parse(input.kind);
  return deps.store.tx(async (t) => {
    const session = await t.sessions.get(input.sessionId);
    if (!session) throw new CohentError("SESSION_NOT_FOUND");
    const { repoId } = session;
    await t.journal.lock(repoId);
    const at = deps.clock();
    const reason =
      (input.reason === undefined ? undefined : reasonText(input.reason)) ??
      (kind === "resume"
        ? null
        : `${kind === "pause" ? "Paused" : "Cancelled"} by ${input.actor} from the Control Room.`);
    const updated = await t.sessions.setControl(session.id, CONTROL_STATE[kind], reason);
    await t.sessions.addCommand({
      id: newId("cmd"),
      repoId,
      sessionId: session.id,
      kind,
      actor: input.actor,
      reason,
      at,
    });
    const openIds = await t.intents.openIdsOfSession(session.id);
    await t.journal.addEvent({
      repoId,
      intentId: openIds[0] ?? "",
      kind: "control",
      summary: `${kind} by ${input.actor}`,
      at,
    });
    if (kind === "cancel") {
      const repo = await t.repos.byId(repoId);
      const ref = { id: repoId, caseInsensitive: !!repo?.caseInsensitive };
      const by = { intentId: null, person: input.actor, client: null, model: null };
      for (const intentId of openIds) {
        await loseClaim(
          t,
          ref,
          intentId,
          { reason: "session-cancelled", by, summary: `scope freed: session cancelled by ${input.actor}` },
          at,
        );
        await dropWaiter(t, ref, { intentId, sessionId: session.id }, "session-cancelled", at);
      }
      if (openIds.length) await grantQueue(t, deps, ref, at);
    }
    return { id: updated.id, control: updated.control, reason };
  });
}

/** The session a person wants to command, with its repository's name for the authorization check. */
export async function findSession(deps: Deps, id: string): Promise<{ id: string; repoName: string }> {
  const session = await deps.store.sessions.get(id);
  if (!session) throw new CohentError("SESSION_NOT_FOUND");
  return session;
}

/** The token a person wants to revoke, with its repository's name for the authorization check. */
export async function findToken(deps: Deps, id: string): Promise<{ id: string; repoName: string }> {
  const token = await deps.store.tokens.get(id);
  if (!token) throw new CohentError("NOT_FOUND", "No such token.");
  return token;
}
