import type { RequestRecord, Requests } from "./contract.js";
import type { Handle } from "./handle.js";
import { T } from "./sql/tables.js";

/**
 * Request ids (protocol REQUEST_ID_HEADER): a token's id is recorded by `begin` in the write's own
 * transaction, so that the write and its record commit together or not at all; its first answer is
 * stored by `answer` once the operation has one. `begin` inserts or finds: a unique key, never a read
 * then a write, so two instances cannot both begin one id.
 */
export const requests = (h: Handle): Requests => {
  const { x } = h;
  const read = async (tokenId: string, key: string): Promise<RequestRecord | null> => {
    const r = await x.get(
      `SELECT ${T.AgentRequest.cols()} FROM "AgentRequest" WHERE "tokenId" = ? AND "key" = ?`,
      tokenId,
      key,
    );
    return r ? T.AgentRequest.decode(r) : null;
  };
  return {
    begin: async ({ tokenId, key, bodyHash, at }) => {
      const inserted = await x.run(
        `INSERT INTO "AgentRequest" ("tokenId", "key", "bodyHash", "outcome", "createdAt") VALUES (?, ?, ?, NULL, ?)
          ON CONFLICT ("tokenId", "key") DO NOTHING`,
        tokenId,
        key,
        bodyHash,
        x.time(at),
      );
      if (inserted) return null;
      const found = await read(tokenId, key);
      if (!found) throw new Error(`AgentRequest ${tokenId}/${key} conflicted but is not there`);
      return found;
    },
    get: read,
    answer: async (tokenId, key, outcome) => {
      const set = (e: typeof x) =>
        e.run(
          `UPDATE "AgentRequest" SET "outcome" = ? WHERE "tokenId" = ? AND "key" = ? AND "outcome" IS NULL`,
          outcome,
          tokenId,
          key,
        );
      return (h.tx ? await set(x) : await h.write(set)) > 0;
    },
    expire: async (before) => {
      const drop = (e: typeof x) => e.run(`DELETE FROM "AgentRequest" WHERE "createdAt" < ?`, e.time(before));
      return h.tx ? drop(x) : h.write(drop);
    },
  };
};
