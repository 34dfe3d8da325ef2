import type { ShellWriteDetail } from "@cohent/protocol";
import type { Journal } from "./contract.js";
import type { Handle } from "./handle.js";
import type { Exec } from "./sql/exec.js";
import { json, list, toDecision } from "./rows.js";
import { insert, insertArgs, insertSql, T } from "./sql/tables.js";

type TailEvent = { seq: number; intentId: string; kind: string; peerIds: string[]; summary: string };
/** A window of the change log after `from`, as of one events stamp (`tailAfter`). */
type Window = { stamp: number; from: number; events: Promise<TailEvent[]> };

const tail = async (x: Exec, repoId: string, after: number, take: number): Promise<TailEvent[]> =>
  (
    await x.all(
      `SELECT "seq", "intentId", "kind", "peerIds", "summary" FROM "Event" WHERE "repoId" = ? AND "seq" > ? ORDER BY "seq" ASC LIMIT ?`,
      repoId,
      after,
      take,
    )
  ).map((e) => ({
    seq: Number(e.seq),
    intentId: e.intentId as string,
    kind: e.kind as string,
    peerIds: list(e.peerIds as string),
    summary: e.summary as string,
  }));

/**
 * The journal: the repository lock, the change log, decisions, packets and guard catches. A class,
 * its methods built once (store/intents IntentStore); what one transaction holds is its fields.
 */
class JournalStore implements Journal {
  private readonly h: Handle;
  private locked: string | null = null;
  private appended: Promise<number> | null = null;
  constructor(h: Handle) {
    this.h = h;
  }

  /**
   * Takes the repository's write lock for the rest of the transaction (once,
   * and once for a whole batch: store/batch). On PostgreSQL, bumping
   * `claimVersion` holds the repository row's lock until commit; on SQLite
   * the transaction's BEGIN IMMEDIATE already holds the database's write
   * lock. Every transaction that claims paths or appends to the change log
   * takes it first, so a repository's claims are decided one at a time and
   * its events commit in the order of their sequence numbers: a cursor never
   * moves past an event that commits later.
   */
  async lock(repoId: string) {
    if (this.locked) return;
    const { x, tx, touch } = this.h;
    const held = tx ? (tx.held ??= new Set()) : new Set<string>();
    if (!held.has(repoId) && x.dialect === "postgres") {
      await x.later(`UPDATE "Repository" SET "claimVersion" = "claimVersion" + 1 WHERE "id" = ?`, [repoId]);
    }
    held.add(repoId);
    this.locked = repoId;
    touch(repoId, "events");
  }

  /**
   * Whether this transaction holds the repository's lock already, so that what it reads is in the
   * order decisions are made. SQLite: from its BEGIN IMMEDIATE. PostgreSQL: once the lock row was
   * sent by this member or an earlier one of its batch; what is read after it waits for it.
   */
  holds(repoId: string) {
    const { x, tx } = this.h;
    return !!tx && (x.dialect === "sqlite" || !!tx.held?.has(repoId));
  }

  /** Appends to the change log (under the lock); the event's sequence number is the cursor. */
  async addEvent(e: Parameters<Journal["addEvent"]>[0]) {
    await this.lock(e.repoId);
    const { x } = this.h;
    // Not waited for: the statements after it share its round trip (PostgreSQL); only the cursor needs it.
    const seq = x
      .ahead(
        `INSERT INTO "Event" ("repoId", "intentId", "kind", "peerIds", "summary", "createdAt") VALUES (?, ?, ?, ?, ?, ?) RETURNING "seq"`,
        [e.repoId, e.intentId, e.kind, json(e.peerIds ?? []), e.summary.slice(0, 500), x.time(e.at)],
      )
      .row.then((r) => Number(r!.seq));
    seq.catch(() => {}); // reported by `settle`
    this.appended = seq;
  }

  /**
   * The repository's latest sequence number. Under the lock, the event this transaction appended
   * last is the latest: no re-read. Outside a transaction, the cursor held by store/changes.
   */
  async latestSeq(repoId: string): Promise<number> {
    const { x, tx, changes } = this.h;
    if (this.appended && this.locked === repoId) return this.appended;
    if (!tx) return changes.cursor(repoId);
    return Number(
      (await x.get(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`, repoId))?.seq ?? 0,
    );
  }

  /**
   * The change log after `after`, at most `take`: what the poll's quick path inspects. Outside a
   * transaction, per repository one window as of one events stamp: a write wakes every long-poll of
   * the repository at once, and they all ask for nearly the same cursor. A window answers only when
   * complete: its read returned fewer events than it asked for.
   */
  async tailAfter(repoId: string, after: number, take: number) {
    const { h } = this;
    const { x } = h;
    if (h.tx) return tail(x, repoId, after, take);
    const windows = h.mem<string, Window>("tail");
    const stamp = h.changes.stamp(repoId, "events");
    const held = windows.get(repoId);
    const past = (events: TailEvent[]) => events.filter((e) => e.seq > after).slice(0, take);
    if (held?.stamp === stamp && after >= held.from) {
      const events = await held.events;
      if (events.length < take) return past(events);
    }
    // From where the last window started (the waiters' cursors move together), so the ones behind share it too.
    const from = Math.min(after, held?.from ?? after);
    const w = { stamp, from, events: tail(x, repoId, from, take) };
    // Set before the read resolves: the crowd woken with this caller reaches here in the same turn.
    windows.set(repoId, w);
    const events = await w.events.catch((err: unknown) => {
      if (windows.get(repoId) === w) windows.delete(repoId);
      throw err;
    });
    if (events.length < take) return past(events);
    // Too far back for one window: the next one starts at the next caller's cursor.
    if (windows.get(repoId) === w) windows.delete(repoId);
    return from === after ? events : tail(x, repoId, after, take);
  }

  async eventsAfter(repoId: string, seq: number, take: number) {
    return (
      await this.h.x.all(
        `SELECT ${T.Event.cols()} FROM "Event" WHERE "repoId" = ? AND "seq" > ? ORDER BY "seq" ASC LIMIT ?`,
        repoId,
        seq,
        take,
      )
    ).map((r) => {
      const e = T.Event.decode(r);
      return { ...e, peerIds: list(e.peerIds) };
    });
  }

  async lastDecision(intentId: string) {
    const r = await this.h.x.get(
      `SELECT ${T.Decision.cols()} FROM "Decision" WHERE "intentId" = ? ORDER BY "createdAt" DESC LIMIT 1`,
      intentId,
    );
    return r ? toDecision(T.Decision.decode(r)) : null;
  }

  async addDecision({ at, peerIds, ...d }: Parameters<Journal["addDecision"]>[0]) {
    const row = { ...d, peerIds: json(peerIds), createdAt: at };
    await insert(this.h.x, T.Decision, row);
    return toDecision(row);
  }

  finish(p: Promise<unknown>) {
    this.h.finish(p);
  }

  async addPacket({ at, peerIds, cursor, ...p }: Parameters<Journal["addPacket"]>[0]) {
    const { x } = this.h;
    const row = { ...p, peerIds: json(peerIds), createdAt: at };
    if (cursor !== null) {
      await insert(x, T.Packet, { ...row, cursor });
      return { cursor: Promise.resolve(cursor) };
    }
    // The latest sequence number as the insert reads it: under the lock, the one this transaction
    // appended last (latestSeq), without waiting for that event's answer first (one round trip fewer).
    const { sql, keys } = insertSql(T.Packet, row);
    const select = sql.replace(/\) VALUES \((.*)\)$/, `, "cursor") SELECT $1, COALESCE(MAX("seq"), 0)`);
    const stored = x
      .ahead(`${select} FROM "Event" WHERE "repoId" = ? RETURNING "cursor"`, [
        ...insertArgs(x, keys, row),
        p.repoId,
      ])
      .row.then((r) => Number(r!.cursor));
    stored.catch(() => {}); // reported by `settle`
    return { cursor: stored };
  }

  /** Records the characters injected, once; "missing" when the session has no such packet. */
  async ackPacket(a: { id: string; sessionId: string; chars: number; at: Date }) {
    const { x } = this.h;
    const updated = await x.run(
      `UPDATE "Packet" SET "ackedChars" = ?, "ackedAt" = ? WHERE "id" = ? AND "sessionId" = ? AND "ackedAt" IS NULL`,
      a.chars,
      x.time(a.at),
      a.id,
      a.sessionId,
    );
    if (updated === 1) return "acked" as const;
    return (await x.get(`SELECT 1 FROM "Packet" WHERE "id" = ? AND "sessionId" = ?`, a.id, a.sessionId))
      ? ("already" as const)
      : ("missing" as const);
  }

  async addGuardCatch({ at, paths, peerIds, detail, ...g }: Parameters<Journal["addGuardCatch"]>[0]) {
    await insert(this.h.x, T.GuardCatch, {
      ...g,
      paths: json(paths),
      peerIds: json(peerIds),
      detail: detail ? json(detail) : null,
      createdAt: at,
    });
  }

  async setShellWriteDetail(id: string, detail: ShellWriteDetail) {
    await this.h.x.run(`UPDATE "GuardCatch" SET "detail" = ? WHERE "id" = ?`, json(detail), id);
  }
}

export const journal = (h: Handle): Journal => new JournalStore(h);
