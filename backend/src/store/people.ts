import type { Pairing } from "../generated/sqlite/client.js";
import type { PrismaTx } from "./db.js";

export type PairingRow = Pairing;
type PairingChange = Partial<
  Pick<
    Pairing,
    "status" | "interval" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "updatedAt" | "decidedAt"
  >
>;

/** Device-grant pairing requests. */
export const pairings = (c: PrismaTx) => ({
  /** False on a user-code collision (the caller draws another). */
  create: async (
    data: Omit<Pairing, "status" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "decidedAt">,
  ) => {
    try {
      await c.pairing.create({ data });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === "P2002") return false;
      throw err;
    }
  },
  byDeviceHash: (deviceCodeHash: string) => c.pairing.findUnique({ where: { deviceCodeHash } }),
  byUserCode: (userCode: string) => c.pairing.findUnique({ where: { userCode } }),
  update: (id: string, data: PairingChange) => c.pairing.update({ where: { id }, data }),
  /** Moves an approved request to issued, once: the single-use guard under concurrent polls. */
  claimApproved: async (id: string, at: Date) =>
    (
      await c.pairing.updateMany({
        where: { id, status: "approved" },
        data: { status: "issued", lastPolledAt: at, updatedAt: at },
      })
    ).count === 1,
  pending: (now: Date, repoName?: string) =>
    c.pairing.findMany({
      where: { status: "pending", expiresAt: { gt: now }, ...(repoName ? { repoName } : {}) },
      orderBy: { createdAt: "desc" },
      take: 50,
    }),
});

/** The Control Room's sign-in: one-time login links and console sessions, both found by the hash of their secret. */
export const consoleAuth = (c: PrismaTx) => ({
  addLoginLink: async ({ at, ...l }: { id: string; tokenHash: string; at: Date; expiresAt: Date }) => {
    await c.loginLink.create({ data: { ...l, createdAt: at } });
  },
  redeemLoginLink: async (tokenHash: string, at: Date) =>
    (
      await c.loginLink.updateMany({
        where: { tokenHash, usedAt: null, expiresAt: { gt: at } },
        data: { usedAt: at },
      })
    ).count === 1,
  addSession: async ({
    at,
    ...s
  }: {
    id: string;
    tokenHash: string;
    csrfToken: string;
    person: string;
    provider: string;
    githubToken: string | null;
    at: Date;
    expiresAt: Date;
  }) => {
    await c.consoleSession.create({ data: { ...s, createdAt: at, lastSeenAt: at } });
  },
  sessionByHash: (tokenHash: string) => c.consoleSession.findUnique({ where: { tokenHash } }),
  touchSession: async (id: string, at: Date) => {
    await c.consoleSession.update({ where: { id }, data: { lastSeenAt: at } });
  },
  endSession: async (id: string) => {
    await c.consoleSession.deleteMany({ where: { id } });
  },
});
