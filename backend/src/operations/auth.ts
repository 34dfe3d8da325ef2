import { CohentError, SessionHeader } from "@cohent/protocol";
import { hashToken, newId } from "../ids.js";
import type { Caller, Deps } from "./deps.js";

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Resolves an agent call to its repository, person and session, and renews
 * that session's lease (and only that session's). It runs before, and
 * outside, the operation's transaction, so the renewal holds even when the
 * operation then fails.
 */
export async function authenticate(deps: Deps, authorization: string | undefined, sessionKey: string | undefined): Promise<Caller> {
  const secret = authorization?.match(BEARER)?.[1];
  if (!secret) throw new CohentError("UNAUTHENTICATED", "Send Authorization: Bearer <agent token>.");
  const key = SessionHeader.safeParse(sessionKey);
  if (!key.success) throw new CohentError("INVALID_SESSION");
  const now = deps.clock();
  // Every agent call and every hook's kill-switch read comes through here, so it is kept to two
  // single statements: the token (with its repository) and the session's renewal, which returns the row.
  const prisma = deps.db.prisma;
  const token = await prisma.agentToken.findUnique({ where: { tokenHash: hashToken(secret) }, include: { repo: true } });
  if (!token || token.revokedAt) throw new CohentError("UNAUTHENTICATED", "The agent token is unknown or revoked.");
  const where = { tokenId_key: { tokenId: token.id, key: key.data } };
  const session =
    (await prisma.session.updateMany({ where: { tokenId: token.id, key: key.data }, data: { lastSeenAt: now } })).count === 1
      ? await prisma.session.findUniqueOrThrow({ where })
      : await prisma.session
          .create({ data: { id: newId("ses"), repoId: token.repoId, tokenId: token.id, key: key.data, client: token.client, createdAt: now, lastSeenAt: now } })
          // Two first calls of one session raced: the other created it; renew that one.
          .catch(() => prisma.session.update({ where, data: { lastSeenAt: now } }));
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
