import type { Action } from "@cohent/protocol";
import type { NameLookup } from "../core/resolver-index.js";
import type { Intents } from "./contract.js";
import type { Handle } from "./handle.js";
import * as peers from "./intent-peers.js";
import { activeRows, byIdRows, intentsSql, many, ORDERED, toIntentRow } from "./intent-rows.js";
import * as writes from "./intent-writes.js";
import { cached } from "./memory.js";
import { toCommit, toParty } from "./rows.js";
import { inListSql, listParam } from "./sql/exec.js";
import { T } from "./sql/tables.js";

/**
 * Work intents (decoded, with their claim, last checkpoint and session liveness) and their checkpoints.
 * A class, its methods built once: a write's transaction makes one object of it, not the ~30 closures
 * of a factory (each named by the transpiler's keepNames: ~10 µs a transaction, bench:load). The
 * resolver's reads of peers are store/intent-peers, the writes store/intent-writes.
 */
class IntentStore implements Intents {
  private readonly h: Handle;
  constructor(h: Handle) {
    this.h = h;
  }
  async get(id: string) {
    const { x } = this.h;
    const r = await x.get(intentsSql(x.dialect, `i."id" = ?`, ""), id);
    return r ? toIntentRow(r) : null;
  }

  /** The intent's own row, without relations or decoding: what ownership checks and plain writes need. */
  async head(id: string) {
    const r = await this.h.x.get(
      `SELECT "id", "repoId", "sessionId", "state", "closedAt", "lastAction" FROM "Intent" WHERE "id" = ?`,
      id,
    );
    return r
      ? {
          id: r.id as string,
          repoId: r.repoId as string,
          sessionId: r.sessionId as string,
          state: r.state as string,
          closedAt: r.closedAt === null ? null : new Date(r.closedAt as string),
          lastAction: r.lastAction as Action,
        }
      : null;
  }

  /** Only where it lives and whose it is: the poll's cheap path (neither ever changes: held in memory). */
  owner(id: string) {
    const { h } = this;
    return cached.kept(h, "owner", id, async () => {
      const r = await h.x.get(`SELECT "repoId", "sessionId" FROM "Intent" WHERE "id" = ?`, id);
      return r ? { repoId: r.repoId as string, sessionId: r.sessionId as string } : null;
    });
  }

  async openIdsOfSession(sessionId: string) {
    return (
      await this.h.x.all(`SELECT "id" FROM "Intent" WHERE "sessionId" = ? AND "closedAt" IS NULL`, sessionId)
    ).map((r) => r.id as string);
  }

  async latestOpenOfSession(sessionId: string) {
    const { x } = this.h;
    const r = await x.get(
      intentsSql(
        x.dialect,
        `i."sessionId" = ? AND i."closedAt" IS NULL`,
        `ORDER BY i."createdAt" DESC LIMIT 1`,
      ),
      sessionId,
    );
    return r ? toIntentRow(r) : null;
  }

  active(repoId: string, cutoff: Date) {
    return activeRows(this.h.x, repoId, cutoff);
  }

  activePeers(repoId: string, cutoff: Date) {
    return peers.activePeers(this.h, repoId, cutoff);
  }

  /** The `take` most recently updated active intents, newest first: the ids first, so only those load. */
  async recent(repoId: string, cutoff: Date, take: number) {
    const { x } = this.h;
    const newest = `SELECT j."id" FROM "Intent" j JOIN "Session" t ON t."id" = j."sessionId" WHERE j."repoId" = ? AND j."closedAt" IS NULL AND t."lastSeenAt" >= ? ORDER BY j."updatedAt" DESC, j."createdAt" ASC, j."id" ASC LIMIT ?`;
    if (x.dialect === "postgres")
      return many(
        x.all(
          intentsSql(
            x.dialect,
            `i."id" IN (${newest})`,
            `ORDER BY i."updatedAt" DESC, i."createdAt" ASC, i."id" ASC`,
          ),
          repoId,
          x.time(cutoff),
          take,
        ),
      );
    // SQLite: two statements cost less than the one with the subquery (measured 68-106 µs against
    // 88-171 with 17 active intents), and a round trip is nothing there; the ids give the order.
    const ids = (await x.all(newest, repoId, x.time(cutoff), take)).map((r) => r.id as string);
    const rows = await byIdRows(x, ids);
    return rows.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
  }

  /** Every open intent, live or not, oldest first. */
  open(repoId: string) {
    const { x } = this.h;
    return many(x.all(intentsSql(x.dialect, `i."repoId" = ? AND i."closedAt" IS NULL`, ORDERED), repoId));
  }

  openOfToken(repoId: string, tokenId: string) {
    const { x } = this.h;
    return many(
      x.all(
        intentsSql(
          x.dialect,
          `i."repoId" = ? AND i."closedAt" IS NULL AND s."tokenId" = ?`,
          `ORDER BY i."createdAt" ASC`,
        ),
        repoId,
        tokenId,
      ),
    );
  }

  completed(repoId: string, take: number) {
    const { x } = this.h;
    return many(
      x.all(
        intentsSql(
          x.dialect,
          `i."repoId" = ? AND i."state" = 'completed'`,
          `ORDER BY i."closedAt" DESC LIMIT ?`,
        ),
        repoId,
        take,
      ),
    );
  }

  candidates(repoId: string, lookup: NameLookup, cutoff: Date) {
    return peers.candidates(this.h.x, repoId, lookup, cutoff);
  }

  byIds(ids: string[]) {
    return byIdRows(this.h.x, ids);
  }

  async parties(ids: string[]) {
    const { x } = this.h;
    return ids.length
      ? (
          await x.all(
            `SELECT "id", "person", "client", "model", "record" FROM "Intent" WHERE ${inListSql(x.dialect, `"id"`)}`,
            listParam(x.dialect, ids),
          )
        ).map((r) =>
          toParty(
            r as {
              id: string;
              person: string;
              client: string | null;
              model: string | null;
              record: string | null;
            },
          ),
        )
      : [];
  }

  namedPeers(intentId: string, repoId: string) {
    return peers.namedPeers(this.h, intentId, repoId);
  }

  create(i: Parameters<Intents["create"]>[0]) {
    return writes.create(this.h.x, i);
  }

  update(id: string, change: Parameters<Intents["update"]>[1]) {
    return writes.update(this.h.x, id, change);
  }

  addCheckpoint(k: Parameters<Intents["addCheckpoint"]>[0]) {
    return writes.addCheckpoint(this.h.x, k);
  }

  /** The commits recorded for these intents, oldest first, by intent. */
  async commits(ids: string[]) {
    const { x } = this.h;
    const rows = ids.length
      ? (
          await x.all(
            `SELECT ${T.Checkpoint.cols()} FROM "Checkpoint" WHERE ${inListSql(x.dialect, `"intentId"`)} AND "source" LIKE 'commit:%' ORDER BY "createdAt" ASC, "id" ASC`,
            listParam(x.dialect, ids),
          )
        ).map((r) => T.Checkpoint.decode(r))
      : [];
    const out = new Map<string, ReturnType<typeof toCommit>[]>();
    for (const k of rows) out.set(k.intentId, [...(out.get(k.intentId) ?? []), toCommit(k)]);
    return out;
  }
}

export const intents = (h: Handle): Intents => new IntentStore(h);
