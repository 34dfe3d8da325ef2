import type { Control } from "@cohent/protocol";
import type { RepoRow, SessionRow, TokenRow as Token, Sessions, Tokens } from "./contract.js";
import type { Handle } from "./handle.js";
import { inListSql, listParam, type Row } from "./sql/exec.js";
import { insert, insertMany, setSql, T } from "./sql/tables.js";

const asSession = <R extends { control: string }>(r: R) => ({ ...r, control: r.control as Control });
const SESSION = T.Session.cols("s");
const toSession = (r: Row): SessionRow => asSession(T.Session.decode(r));
type TokenRow = Token & { repo: RepoRow };

/**
 * Agent tokens, stored as the hashes of their secrets. `byHash` (every agent
 * call) answers from memory outside a transaction until the repository's
 * control stamp moves (a revocation, a goal change).
 */
export const tokens = (h: Handle): Tokens => {
  const { x, touch } = h;
  const cache = h.mem<string, { row: TokenRow; stamp: number }>("tokens");
  const read = async (tokenHash: string): Promise<TokenRow | null> => {
    const r = await x.get(
      `SELECT ${T.AgentToken.cols("t")}, ${T.Repository.cols("r", "r_")} FROM "AgentToken" t JOIN "Repository" r ON r."id" = t."repoId" WHERE t."tokenHash" = ?`,
      tokenHash,
    );
    return r ? { ...T.AgentToken.decode(r), repo: T.Repository.decode(r, "r_") } : null;
  };
  const get = async (id: string) => {
    const r = await x.get(
      `SELECT ${T.AgentToken.cols("t")}, r."name" AS "repoName" FROM "AgentToken" t JOIN "Repository" r ON r."id" = t."repoId" WHERE t."id" = ?`,
      id,
    );
    return r ? { ...T.AgentToken.decode(r), repoName: r.repoName as string } : null;
  };
  return {
    byHash: async (tokenHash: string) => {
      if (h.tx) return read(tokenHash);
      const held = cache.get(tokenHash);
      // The stamp is taken before the read; the first read cannot know the repository yet, so it is kept unstamped (-1 never matches).
      const stamp = held ? h.changes.stamp(held.row.repoId, "control") : -1;
      if (held && held.stamp === stamp) return held.row;
      const row = await read(tokenHash);
      if (row) cache.set(tokenHash, { row, stamp: held?.row.repoId === row.repoId ? stamp : -1 });
      else cache.delete(tokenHash);
      return row;
    },
    get,
    create: async ({ at, ...t }) => {
      await insert(x, T.AgentToken, { ...t, createdAt: at });
    },
    createMany: async (rows) => {
      await insertMany(
        x,
        T.AgentToken,
        rows.map(({ at, ...t }) => ({ ...t, createdAt: at })),
      );
    },
    revoke: async (id: string, at: Date) => {
      await x.run(
        `UPDATE "AgentToken" SET "revokedAt" = COALESCE("revokedAt", ?) WHERE "id" = ?`,
        x.time(at),
        id,
      );
      const row = await get(id);
      if (!row) throw new Error(`No AgentToken ${id}`);
      touch(row.repoId, "control");
      const { repoName: _name, ...token } = row;
      return token;
    },
  };
};

/**
 * Agent sessions and the human commands given to them. Outside a
 * transaction the lease renewal is written at most every `renewEveryMs`; in
 * between, the session (its control) is answered from memory until the
 * repository's control stamp moves.
 */
export const sessions = (h: Handle): Sessions => {
  const { x, touch } = h;
  const cache = h.mem<string, { row: SessionRow; stamp: number; writtenAt: number }>("sessions");
  const byKey = async (tokenId: string, key: string) => {
    const r = await x.get(
      `SELECT ${SESSION} FROM "Session" s WHERE s."tokenId" = ? AND s."key" = ?`,
      tokenId,
      key,
    );
    return r ? toSession(r) : null;
  };
  const byId = async (id: string) => {
    const r = await x.get(`SELECT ${SESSION} FROM "Session" s WHERE s."id" = ?`, id);
    return r ? toSession(r) : null;
  };
  /** Renews the lease, creating the session on its first call: one statement unless it is the first. */
  const write = async (s: Parameters<Sessions["renew"]>[0]) => {
    const renew = (y: typeof x) =>
      y.get(
        `UPDATE "Session" SET "lastSeenAt" = ? WHERE "tokenId" = ? AND "key" = ? RETURNING ${T.Session.cols()}`,
        y.time(s.at),
        s.tokenId,
        s.key,
      );
    // Outside a transaction, an UPDATE … RETURNING is a write: on the write connection (handle `write`).
    const renewed = h.tx ? await renew(x) : await h.write(renew);
    if (renewed) return toSession(renewed);
    const created = { id: s.newId(), repoId: s.repoId, tokenId: s.tokenId, key: s.key, client: s.client };
    try {
      await insert(x, T.Session, { ...created, createdAt: s.at, lastSeenAt: s.at });
      if (h.tx) return (await byKey(s.tokenId, s.key))!;
    } catch {
      // Two first calls of one session raced: the other created it; renew that one.
      if (h.tx) throw new Error(`Session ${s.key} was created concurrently`);
    }
    const again = await h.write(renew);
    if (!again) throw new Error(`Session ${s.key} could not be created`);
    return toSession(again);
  };
  return {
    /**
     * Renews the session's lease, creating the session on its first call. Every agent call runs this.
     * `renewEveryMs`: outside a transaction the renewal is written at most this often.
     */
    renew: async (s) => {
      if (h.tx) return write(s);
      const key = `${s.tokenId}|${s.key}`;
      const at = s.at.getTime();
      const held = cache.get(key);
      const stamp = h.changes.stamp(s.repoId, "control");
      const due = !held || at < held.writtenAt || at - held.writtenAt >= (s.renewEveryMs ?? 0);
      if (!due && held.stamp === stamp) return { ...held.row, lastSeenAt: s.at };
      // Not due, but the control may have moved: read the row again, write nothing.
      const reread = due ? null : await byKey(s.tokenId, s.key);
      if (reread) {
        cache.set(key, { row: reread, stamp, writtenAt: held!.writtenAt });
        return { ...reread, lastSeenAt: s.at };
      }
      const row = await write(s);
      cache.set(key, { row, stamp, writtenAt: at });
      return row;
    },
    get: async (id: string) => {
      const r = await x.get(
        `SELECT ${SESSION}, r."name" AS "repoName" FROM "Session" s JOIN "Repository" r ON r."id" = s."repoId" WHERE s."id" = ?`,
        id,
      );
      return r ? { ...toSession(r), repoName: r.repoName as string } : null;
    },
    setClient: async (id: string, client: string | null, model: string | null) => {
      await x.later(`UPDATE "Session" SET "client" = ?, "model" = ? WHERE "id" = ?`, [client, model, id]);
    },
    /**
     * Records what the session's hook reported of its client (core/enforcement hostChange): called only when
     * it changed, so the hot path writes nothing on an unchanged call. `guardSeen` sets the first guarded call's
     * time once; it is never cleared (another call's stale view cannot undo it). The renewal held in memory
     * follows, so that the next call compares with what was written instead of writing it again.
     */
    setHost: async (
      s: { id: string; tokenId: string; key: string },
      r: { host: string; hostVersion: string | null; wiring: string; guardSeen: boolean },
      at: Date,
    ) => {
      const { sets, args } = setSql(x, {
        host: r.host,
        hostVersion: r.hostVersion,
        wiring: r.wiring,
        hostReportedAt: at,
        guardSeenAt: r.guardSeen ? at : undefined,
      });
      await x.run(`UPDATE "Session" SET ${sets.join(", ")} WHERE "id" = ?`, ...args, s.id);
      const held = cache.get(`${s.tokenId}|${s.key}`);
      if (held)
        held.row = {
          ...held.row,
          host: r.host,
          hostVersion: r.hostVersion,
          wiring: r.wiring,
          hostReportedAt: at,
          guardSeenAt: r.guardSeen ? at : held.row.guardSeenAt,
        };
    },
    /** The checkout whose wiring the session's start reported (store/wiring): links the session to its alarm. */
    setCheckout: async (id: string, checkout: string) => {
      await x.later(
        `UPDATE "Session" SET "checkout" = ? WHERE "id" = ? AND ("checkout" IS NULL OR "checkout" <> ?)`,
        [checkout, id, checkout],
      );
    },
    /** The repository's sessions that called since `since` (all without it): what the metrics count. */
    seenSince: async (repoId: string, since?: Date) =>
      (
        await x.all(
          `SELECT ${SESSION} FROM "Session" s WHERE s."repoId" = ?${since ? ` AND s."lastSeenAt" >= ?` : ""}`,
          repoId,
          ...(since ? [x.time(since)] : []),
        )
      ).map((r) => {
        const s = T.Session.decode(r);
        return {
          id: s.id,
          tokenId: s.tokenId,
          host: s.host,
          hostVersion: s.hostVersion,
          wiring: s.wiring,
          guardSeenAt: s.guardSeenAt,
          checkout: s.checkout,
        };
      }),
    setControl: async (id: string, control: Control, controlReason: string | null) => {
      await x.run(
        `UPDATE "Session" SET "control" = ?, "controlReason" = ? WHERE "id" = ?`,
        control,
        controlReason,
        id,
      );
      const row = await byId(id);
      if (!row) throw new Error(`No Session ${id}`);
      touch(row.repoId, "control");
      return row;
    },
    /** Raises the session's lease epoch (its claims were freed without it asking); its next call learns it. */
    fence: async (id: string, repoId: string) => {
      await x.later(`UPDATE "Session" SET "epoch" = "epoch" + 1 WHERE "id" = ?`, [id], 1);
      touch(repoId, "control");
    },
    ofRepo: async (repoId: string) => {
      const rows = await x.all(
        `SELECT ${SESSION}, t."person" AS "person" FROM "Session" s JOIN "AgentToken" t ON t."id" = s."tokenId" WHERE s."repoId" = ? ORDER BY s."lastSeenAt" DESC`,
        repoId,
      );
      const ids = rows.map((r) => r.id as string);
      const open = ids.length
        ? await x.all(
            `SELECT "id", "sessionId", "state", "lastAction" FROM "Intent" WHERE "closedAt" IS NULL AND ${inListSql(x.dialect, `"sessionId"`)} ORDER BY "createdAt" ASC, "id" ASC`,
            listParam(x.dialect, ids),
          )
        : [];
      return rows.map((r) => ({
        ...toSession(r),
        person: r.person as string,
        intents: open
          .filter((i) => i.sessionId === r.id)
          .map((i) => ({ id: i.id as string, state: i.state as string, lastAction: i.lastAction as string })),
      }));
    },
    addCommand: async ({ at, ...cmd }) => {
      await insert(x, T.Command, { ...cmd, createdAt: at });
    },
  };
};
