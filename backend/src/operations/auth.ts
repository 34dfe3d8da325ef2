import { CohentError, SessionHeader } from "@cohent/protocol";
import { hashToken, newId } from "../ids.js";
import type { Caller, Deps } from "./deps.js";

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Resolves an agent call to its repository, person and session, and renews
 * that session's lease (and only that session's). It runs in a transaction
 * of its own so that the renewal holds even when the operation then fails.
 */
export async function authenticate(deps: Deps, authorization: string | undefined, sessionKey: string | undefined): Promise<Caller> {
  const secret = authorization?.match(BEARER)?.[1];
  if (!secret) throw new CohentError("UNAUTHENTICATED", "Send Authorization: Bearer <agent token>.");
  const key = SessionHeader.safeParse(sessionKey);
  if (!key.success) throw new CohentError("INVALID_SESSION");
  const now = deps.clock();
  return deps.db.tx(async (tx) => {
    const token = await tx.agentToken.findUnique({ where: { tokenHash: hashToken(secret) }, include: { repo: true } });
    if (!token || token.revokedAt) throw new CohentError("UNAUTHENTICATED", "The agent token is unknown or revoked.");
    let session = await tx.session.findUnique({ where: { tokenId_key: { tokenId: token.id, key: key.data } } });
    session = session
      ? await tx.session.update({ where: { id: session.id }, data: { lastSeenAt: now } })
      : await tx.session.create({
          data: { id: newId("ses"), repoId: token.repoId, tokenId: token.id, key: key.data, client: token.client, createdAt: now, lastSeenAt: now },
        });
    return {
      repo: { id: token.repo.id, name: token.repo.name, goal: token.repo.goal, caseInsensitive: token.repo.caseInsensitive },
      token: { id: token.id, person: token.person, client: token.client },
      session: {
        id: session.id,
        key: session.key,
        client: session.client,
        model: session.model,
        control: session.control as Caller["session"]["control"],
        controlReason: session.controlReason,
        lastSeenAt: session.lastSeenAt,
      },
    };
  });
}

/** The session part of every response's meta: how the session reads its control commands. */
export function sessionMeta(deps: Deps, caller: Caller) {
  return {
    id: caller.session.id,
    control: caller.session.control,
    controlReason: caller.session.controlReason,
    leaseExpiresAt: new Date(caller.session.lastSeenAt.getTime() + deps.lease.leaseMs).toISOString(),
  };
}
