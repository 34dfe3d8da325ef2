import type { ConsoleAuth, PairingChange, PairingRow, Pairings } from "./contract.js";
import type { Handle } from "./handle.js";
import { insert, insertArgs, insertSql, setSql, T } from "./sql/tables.js";

const PAIRING = T.Pairing.cols();

/** A unique constraint refused the row (SQLite or PostgreSQL). */
const isUniqueViolation = (err: unknown) => {
  const code = (err as { code?: string }).code ?? "";
  return (
    code === "23505" || code.startsWith("SQLITE_CONSTRAINT_UNIQUE") || code === "SQLITE_CONSTRAINT_PRIMARYKEY"
  );
};

/** Device-grant pairing requests. */
export const pairings = ({ x }: Handle): Pairings => {
  const one = async (where: string, v: string) => {
    const r = await x.get(`SELECT ${PAIRING} FROM "Pairing" WHERE ${where} = ?`, v);
    return r ? T.Pairing.decode(r) : null;
  };
  return {
    /** False on a user-code collision (the caller draws another). */
    create: async (
      data: Omit<PairingRow, "status" | "approvedBy" | "person" | "tokenId" | "lastPolledAt" | "decidedAt">,
    ) => {
      try {
        const { sql, keys } = insertSql(T.Pairing, data);
        await x.run(sql, ...insertArgs(x, keys, data));
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    },
    byDeviceHash: (deviceCodeHash: string) => one(`"deviceCodeHash"`, deviceCodeHash),
    byUserCode: (userCode: string) => one(`"userCode"`, userCode),
    update: async (id: string, data: PairingChange) => {
      const { sets, args } = setSql(x, data);
      if (sets.length) await x.run(`UPDATE "Pairing" SET ${sets.join(", ")} WHERE "id" = ?`, ...args, id);
      const row = await one(`"id"`, id);
      if (!row) throw new Error(`No Pairing ${id}`);
      return row;
    },
    /** Moves an approved request to issued, once: the single-use guard under concurrent polls. */
    claimApproved: async (id: string, at: Date) =>
      (await x.run(
        `UPDATE "Pairing" SET "status" = 'issued', "lastPolledAt" = ?, "updatedAt" = ? WHERE "id" = ? AND "status" = 'approved'`,
        x.time(at),
        x.time(at),
        id,
      )) === 1,
    pending: async (now: Date, repoName?: string) =>
      (
        await x.all(
          `SELECT ${PAIRING} FROM "Pairing" WHERE "status" = 'pending' AND "expiresAt" > ?${repoName ? ` AND "repoName" = ?` : ""} ORDER BY "createdAt" DESC LIMIT 50`,
          x.time(now),
          ...(repoName ? [repoName] : []),
        )
      ).map((r) => T.Pairing.decode(r)),
  };
};

/** The Control Room's sign-in: one-time login links and console sessions, both found by the hash of their secret. */
export const consoleAuth = ({ x }: Handle): ConsoleAuth => ({
  addLoginLink: async ({ at, ...l }: { id: string; tokenHash: string; at: Date; expiresAt: Date }) => {
    await insert(x, T.LoginLink, { ...l, createdAt: at });
  },
  redeemLoginLink: async (tokenHash: string, at: Date) =>
    (await x.run(
      `UPDATE "LoginLink" SET "usedAt" = ? WHERE "tokenHash" = ? AND "usedAt" IS NULL AND "expiresAt" > ?`,
      x.time(at),
      tokenHash,
      x.time(at),
    )) === 1,
  addSession: async ({ at, ...s }) => {
    await insert(x, T.ConsoleSession, { ...s, createdAt: at, lastSeenAt: at });
  },
  sessionByHash: async (tokenHash: string) => {
    const r = await x.get(
      `SELECT ${T.ConsoleSession.cols()} FROM "ConsoleSession" WHERE "tokenHash" = ?`,
      tokenHash,
    );
    return r ? T.ConsoleSession.decode(r) : null;
  },
  touchSession: async (id: string, at: Date) => {
    await x.later(`UPDATE "ConsoleSession" SET "lastSeenAt" = ? WHERE "id" = ?`, [x.time(at), id]);
  },
  endSession: async (id: string) => {
    await x.later(`DELETE FROM "ConsoleSession" WHERE "id" = ?`, [id]);
  },
});
