import type { PrismaTx } from "./db.js";

export interface PairingRow {
  id: string;
  repoName: string;
  machine: string;
  user: string;
  client: string | null;
  userCode: string;
  status: string;
  interval: number;
  approvedBy: string | null;
  person: string | null;
  tokenId: string | null;
  lastPolledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
}
type PairingChange = Partial<Pick<PairingRow, "status" | "interval" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "updatedAt">> & { decidedAt?: Date };

/** Device-grant pairing requests. */
export interface Pairings {
  /** False on a user-code collision (the caller draws another). */
  create(p: Omit<PairingRow, "status" | "approvedBy" | "person" | "tokenId" | "lastPolledAt"> & { deviceCodeHash: string }): Promise<boolean>;
  byDeviceHash(hash: string): Promise<PairingRow | null>;
  byUserCode(userCode: string): Promise<PairingRow | null>;
  update(id: string, change: PairingChange): Promise<PairingRow>;
  /** Moves an approved request to issued, once: the single-use guard under concurrent polls. */
  claimApproved(id: string, at: Date): Promise<boolean>;
  pending(now: Date, repoName?: string): Promise<PairingRow[]>;
}

export interface ConsoleSessionRow {
  id: string;
  person: string;
  provider: string;
  csrfToken: string;
  githubToken: string | null;
  expiresAt: Date;
  lastSeenAt: Date;
}

/** The Control Room's sign-in: one-time login links and console sessions (both by hash). */
export interface ConsoleAuth {
  addLoginLink(l: { id: string; tokenHash: string; at: Date; expiresAt: Date }): Promise<void>;
  redeemLoginLink(tokenHash: string, at: Date): Promise<boolean>;
  addSession(s: { id: string; tokenHash: string; csrfToken: string; person: string; provider: string; githubToken: string | null; at: Date; expiresAt: Date }): Promise<void>;
  sessionByHash(tokenHash: string): Promise<ConsoleSessionRow | null>;
  touchSession(id: string, at: Date): Promise<void>;
  endSession(id: string): Promise<void>;
}

export const pairings = (c: PrismaTx): Pairings => ({
  create: async (p) => {
    try {
      await c.pairing.create({ data: p });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === "P2002") return false; // unique user code taken
      throw err;
    }
  },
  byDeviceHash: (deviceCodeHash) => c.pairing.findUnique({ where: { deviceCodeHash } }),
  byUserCode: (userCode) => c.pairing.findUnique({ where: { userCode } }),
  update: (id, data) => c.pairing.update({ where: { id }, data }),
  claimApproved: async (id, at) =>
    (await c.pairing.updateMany({ where: { id, status: "approved" }, data: { status: "issued", lastPolledAt: at, updatedAt: at } })).count === 1,
  pending: (now, repoName) =>
    c.pairing.findMany({
      where: { status: "pending", expiresAt: { gt: now }, ...(repoName ? { repoName } : {}) },
      orderBy: { createdAt: "desc" },
      take: 50,
    }),
});

export const consoleAuth = (c: PrismaTx): ConsoleAuth => ({
  addLoginLink: async ({ at, ...l }) => {
    await c.loginLink.create({ data: { ...l, createdAt: at } });
  },
  redeemLoginLink: async (tokenHash, at) =>
    (await c.loginLink.updateMany({ where: { tokenHash, usedAt: null, expiresAt: { gt: at } }, data: { usedAt: at } })).count === 1,
  addSession: async ({ at, ...s }) => {
    await c.consoleSession.create({ data: { ...s, createdAt: at, lastSeenAt: at } });
  },
  sessionByHash: (tokenHash) => c.consoleSession.findUnique({ where: { tokenHash } }),
  touchSession: async (id, at) => {
    await c.consoleSession.update({ where: { id }, data: { lastSeenAt: at } });
  },
  endSession: async (id) => {
    await c.consoleSession.deleteMany({ where: { id } });
  },
});
