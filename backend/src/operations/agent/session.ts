import { CohentError, SessionHeader, type HostReport } from "@cohent/protocol";
import { hostChange } from "../../core/enforcement.js";
import { hashToken, newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";

const BEARER = /^Bearer\s+(\S+)$/i;

/** The agent token an Authorization header carries, if it is a bearer header. */
export const bearerSecret = (authorization: string | undefined) => authorization?.match(BEARER)?.[1];

/**
 * How often a session's lease renewal is written: at most every 15 s, and
 * never less often than an eighth of the silent time. In between the store
 * answers the session from memory, so a session's stored last call is at
 * most this much older than its real one (the 10-minute lease, the 2-minute
 * silent mark, are that much early at worst, never late).
 */
export const renewEvery = (deps: Pick<Deps, "lease">) => Math.min(15_000, deps.lease.silentMs / 8);

/**
 * Resolves an agent call to its repository, person and session, and renews
 * that session's lease (and only that session's). It runs before, and
 * outside, the operation's transaction, so the renewal holds even when the
 * operation then fails. Every agent call and every hook's kill-switch read
 * comes through here: two store calls, the token and the session's renewal
 * (a third, rarely: the session's host report, written when it changed).
 */
export async function authenticate(
  deps: Deps,
  authorization: string | undefined,
  sessionKey: string | undefined,
  /** The secret's hash, when the transport computed it already (its rate limit's key). */
  secretHash?: string,
  /**
   * What the hook reported of its client (x-cohent-host), and whether this call is one the hook makes only
   * from the guard (the kill-switch read, the poll). Recorded when it changes: an unchanged call writes nothing.
   */
  host?: { report: HostReport | null; guardCall: boolean },
): Promise<Caller> {
  const secret = bearerSecret(authorization);
  if (!secret) throw new CohentError("UNAUTHENTICATED", "Send Authorization: Bearer <agent token>.");
  const key = SessionHeader.safeParse(sessionKey);
  if (!key.success) throw new CohentError("INVALID_SESSION");
  const token = await deps.store.tokens.byHash(secretHash ?? hashToken(secret));
  if (!token || token.revokedAt)
    throw new CohentError("UNAUTHENTICATED", "The agent token is unknown or revoked.");
  const session = await deps.store.sessions.renew({
    repoId: token.repoId,
    tokenId: token.id,
    key: key.data,
    client: token.client,
    newId: () => newId("ses"),
    at: deps.clock(),
    renewEveryMs: renewEvery(deps),
  });
  const change = host && hostChange(session, host.report, host.guardCall);
  if (change) await deps.store.sessions.setHost(session, change, deps.clock());
  return {
    repo: token.repo,
    token: { id: token.id, person: token.person, client: token.client },
    session: {
      id: session.id,
      key: session.key,
      client: session.client,
      model: session.model,
      control: session.control,
      controlReason: session.controlReason,
      lastSeenAt: session.lastSeenAt,
      epoch: session.epoch,
    },
  };
}

/** The session part of every response's meta: how the session reads its control commands. */
export function sessionMeta(deps: Deps, caller: Caller) {
  const { id, control, controlReason, lastSeenAt, epoch } = caller.session;
  return {
    id,
    control,
    controlReason,
    leaseExpiresAt: new Date(lastSeenAt.getTime() + deps.lease.leaseMs).toISOString(),
    epoch,
  };
}
