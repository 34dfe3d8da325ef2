import { CohentError, SessionHeader } from "@cohent/protocol";
import { hashToken, newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Resolves an agent call to its repository, person and session, and renews
 * that session's lease (and only that session's). It runs before, and
 * outside, the operation's transaction, so the renewal holds even when the
 * operation then fails. Every agent call and every hook's kill-switch read
 * comes through here: two store calls, the token and the session's renewal.
 */
export async function authenticate(deps: Deps, authorization: string | undefined, sessionKey: string | undefined): Promise<Caller> {
  const secret = authorization?.match(BEARER)?.[1];
  if (!secret) throw new CohentError("UNAUTHENTICATED", "Send Authorization: Bearer <agent token>.");
  const key = SessionHeader.safeParse(sessionKey);
  if (!key.success) throw new CohentError("INVALID_SESSION");
  const token = await deps.store.tokens.byHash(hashToken(secret));
  if (!token || token.revokedAt) throw new CohentError("UNAUTHENTICATED", "The agent token is unknown or revoked.");
  const session = await deps.store.sessions.renew({ repoId: token.repoId, tokenId: token.id, key: key.data, client: token.client, newId: newId("ses"), at: deps.clock() });
  return {
    repo: token.repo,
    token: { id: token.id, person: token.person, client: token.client },
    session: { id: session.id, key: session.key, client: session.client, model: session.model, control: session.control, controlReason: session.controlReason, lastSeenAt: session.lastSeenAt },
  };
}

/** The session part of every response's meta: how the session reads its control commands. */
export function sessionMeta(deps: Deps, caller: Caller) {
  const { id, control, controlReason, lastSeenAt } = caller.session;
  return { id, control, controlReason, leaseExpiresAt: new Date(lastSeenAt.getTime() + deps.lease.leaseMs).toISOString() };
}
