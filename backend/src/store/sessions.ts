import type { PrismaTx } from "./db.js";
import type { Control, Repo } from "./rows.js";

export interface SessionRow {
  id: string;
  repoId: string;
  key: string;
  client: string | null;
  model: string | null;
  control: Control;
  controlReason: string | null;
  lastSeenAt: Date;
}
export interface TokenRow {
  id: string;
  repoId: string;
  person: string;
  client: string | null;
  revokedAt: Date | null;
}

/** Agent tokens (stored as hashes). */
export interface Tokens {
  byHash(tokenHash: string): Promise<(TokenRow & { repo: Repo }) | null>;
  get(id: string): Promise<(TokenRow & { repoName: string }) | null>;
  create(t: { id: string; repoId: string; person: string; client: string | null; tokenHash: string; at: Date }): Promise<void>;
  revoke(id: string, at: Date): Promise<TokenRow>;
}

/** Agent sessions and the human commands given to them. */
export interface Sessions {
  /** Renews the session's lease, creating the session on its first call. Every agent call runs this. */
  renew(s: { repoId: string; tokenId: string; key: string; client: string | null; newId: string; at: Date }): Promise<SessionRow>;
  get(id: string): Promise<(SessionRow & { repoName: string }) | null>;
  setClient(id: string, client: string | null, model: string | null): Promise<void>;
  setControl(id: string, control: Control, reason: string | null): Promise<SessionRow>;
  ofRepo(repoId: string): Promise<(SessionRow & { person: string; intents: { id: string; state: string; lastAction: string }[] })[]>;
  addCommand(c: { id: string; repoId: string; sessionId: string; kind: string; actor: string; reason: string | null; at: Date }): Promise<void>;
}

const asSession = <T extends { control: string }>(r: T) => ({ ...r, control: r.control as Control });

export const tokens = (c: PrismaTx): Tokens => ({
  byHash: (tokenHash) => c.agentToken.findUnique({ where: { tokenHash }, include: { repo: true } }),
  get: async (id) => {
    const row = await c.agentToken.findUnique({ where: { id }, include: { repo: { select: { name: true } } } });
    return row ? { ...row, repoName: row.repo.name } : null;
  },
  create: async ({ at, ...t }) => {
    await c.agentToken.create({ data: { ...t, createdAt: at } });
  },
  revoke: async (id, at) => {
    const row = await c.agentToken.findUniqueOrThrow({ where: { id } });
    return c.agentToken.update({ where: { id }, data: { revokedAt: row.revokedAt ?? at } });
  },
});

export const sessions = (c: PrismaTx): Sessions => ({
  // Kept to single statements: a renewal that returns nothing means a first call, which creates the row.
  renew: async ({ repoId, tokenId, key, client, newId, at }) => {
    const where = { tokenId_key: { tokenId, key } };
    const renewed = (await c.session.updateMany({ where: { tokenId, key }, data: { lastSeenAt: at } })).count === 1;
    const row = renewed
      ? await c.session.findUniqueOrThrow({ where })
      : await c.session
          .create({ data: { id: newId, repoId, tokenId, key, client, createdAt: at, lastSeenAt: at } })
          // Two first calls of one session raced: the other created it; renew that one.
          .catch(() => c.session.update({ where, data: { lastSeenAt: at } }));
    return asSession(row);
  },
  get: async (id) => {
    const row = await c.session.findUnique({ where: { id }, include: { repo: { select: { name: true } } } });
    return row ? { ...asSession(row), repoName: row.repo.name } : null;
  },
  setClient: async (id, client, model) => {
    await c.session.update({ where: { id }, data: { client, model } });
  },
  setControl: async (id, control, controlReason) => asSession(await c.session.update({ where: { id }, data: { control, controlReason } })),
  ofRepo: async (repoId) =>
    (
      await c.session.findMany({
        where: { repoId },
        include: { token: { select: { person: true } }, intents: { where: { closedAt: null }, select: { id: true, state: true, lastAction: true } } },
        orderBy: { lastSeenAt: "desc" },
      })
    ).map((s) => ({ ...asSession(s), person: s.token.person })),
  addCommand: async ({ at, ...cmd }) => {
    await c.command.create({ data: { ...cmd, createdAt: at } });
  },
});
