import type { PrismaTx } from "./db.js";
import type { Touch } from "./index.js";
import type { Control } from "@cohent/protocol";

const asSession = <T extends { control: string }>(r: T) => ({ ...r, control: r.control as Control });

/** Agent tokens, stored as the hashes of their secrets. */
export const tokens = (c: PrismaTx, touch: Touch = () => {}) => ({
  byHash: async (tokenHash: string) =>
    await c.agentToken.findUnique({ where: { tokenHash }, include: { repo: true } }),
  get: async (id: string) => {
    const row = await c.agentToken.findUnique({
      where: { id },
      include: { repo: { select: { name: true } } },
    });
    return row && { ...row, repoName: row.repo.name };
  },
  create: async ({
    at,
    ...t
  }: {
    id: string;
    repoId: string;
    person: string;
    client: string | null;
    tokenHash: string;
    at: Date;
  }) => {
    await c.agentToken.create({ data: { ...t, createdAt: at } });
  },
  revoke: async (id: string, at: Date) => {
    const row = await c.agentToken.findUniqueOrThrow({ where: { id } });
    const updated = await c.agentToken.update({ where: { id }, data: { revokedAt: row.revokedAt ?? at } });
    touch(row.repoId, "control");
    return updated;
  },
});

/** Agent sessions and the human commands given to them. */
export const sessions = (c: PrismaTx, touch: Touch = () => {}) => ({
  /**
   * Renews the session's lease, creating the session on its first call. Every agent call runs this,
   * as single statements: a renewal that changes no row means a first call, which creates it.
   * `renewEveryMs`: the hot store (store/hot) writes a renewal at most this often; this one always writes.
   */
  renew: async (s: {
    repoId: string;
    tokenId: string;
    key: string;
    client: string | null;
    /** The id of a session seen for the first time: asked only then, not on every call. */
    newId: () => string;
    at: Date;
    renewEveryMs?: number;
  }) => {
    const { tokenId, key, at } = s;
    const where = { tokenId_key: { tokenId, key } };
    const renewed =
      (await c.session.updateMany({ where: { tokenId, key }, data: { lastSeenAt: at } })).count === 1;
    const row = renewed
      ? await c.session.findUniqueOrThrow({ where })
      : await c.session
          .create({
            data: {
              id: s.newId(),
              repoId: s.repoId,
              tokenId,
              key,
              client: s.client,
              createdAt: at,
              lastSeenAt: at,
            },
          })
          // Two first calls of one session raced: the other created it; renew that one.
          .catch(() => c.session.update({ where, data: { lastSeenAt: at } }));
    return asSession(row);
  },
  get: async (id: string) => {
    const row = await c.session.findUnique({ where: { id }, include: { repo: { select: { name: true } } } });
    if (!row) return null;
    const { repo, ...session } = row;
    return { ...asSession(session), repoName: repo.name };
  },
  setClient: async (id: string, client: string | null, model: string | null) => {
    await c.session.update({ where: { id }, data: { client, model } });
  },
  /**
   * Records what the session's hook reported of its client (core/enforcement hostChange): called only when
   * it changed, so the hot path writes nothing on an unchanged call. `guardSeen` sets the first guarded call's
   * time once; it is never cleared (another call's stale view cannot undo it).
   */
  setHost: async (
    s: { id: string; tokenId: string; key: string },
    h: { host: string; hostVersion: string | null; wiring: string; guardSeen: boolean },
    at: Date,
  ) => {
    await c.session.update({
      where: { id: s.id },
      data: {
        host: h.host,
        hostVersion: h.hostVersion,
        wiring: h.wiring,
        hostReportedAt: at,
        ...(h.guardSeen ? { guardSeenAt: at } : {}),
      },
    });
  },
  /** The checkout whose wiring the session's start reported (store/wiring): links the session to its alarm. */
  setCheckout: async (id: string, checkout: string) => {
    await c.session.updateMany({
      where: { id, OR: [{ checkout: null }, { checkout: { not: checkout } }] },
      data: { checkout },
    });
  },
  /** The repository's sessions that called since `since` (all without it): what the metrics count. */
  seenSince: async (repoId: string, since?: Date) =>
    await c.session.findMany({
      where: { repoId, ...(since ? { lastSeenAt: { gte: since } } : {}) },
      select: {
        id: true,
        tokenId: true,
        host: true,
        hostVersion: true,
        wiring: true,
        guardSeenAt: true,
        checkout: true,
      },
    }),
  setControl: async (id: string, control: Control, controlReason: string | null) => {
    const row = asSession(await c.session.update({ where: { id }, data: { control, controlReason } }));
    touch(row.repoId, "control");
    return row;
  },
  /** Raises the session's lease epoch (its claims were freed without it asking); its next call learns it. */
  fence: async (id: string, repoId: string) => {
    await c.session.update({ where: { id }, data: { epoch: { increment: 1 } } });
    touch(repoId, "control");
  },
  ofRepo: async (repoId: string) =>
    (
      await c.session.findMany({
        where: { repoId },
        include: {
          token: { select: { person: true } },
          intents: { where: { closedAt: null }, select: { id: true, state: true, lastAction: true } },
        },
        orderBy: { lastSeenAt: "desc" },
      })
    ).map((s) => ({ ...asSession(s), person: s.token.person })),
  addCommand: async ({
    at,
    ...cmd
  }: {
    id: string;
    repoId: string;
    sessionId: string;
    kind: string;
    actor: string;
    reason: string | null;
    at: Date;
  }) => {
    await c.command.create({ data: { ...cmd, createdAt: at } });
  },
});
