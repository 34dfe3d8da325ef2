import type { Db, PrismaTx } from "./db.js";
import { intents } from "./intents.js";
import type { Overrides, Touch } from "./index.js";
import { journal } from "./journal.js";
import { claims } from "./claims.js";
import { sessions, tokens } from "./sessions.js";
import { onConnection, statements, type Statements } from "./fast.js";
import { outsideStatements } from "./outside.js";
import { rawOf } from "./shell.js";

/**
 * The hot path's memory: what the agent calls read on every call, held here
 * and checked against the change stamps (store/changes) instead of read
 * again. Each cache answers only outside a transaction (a transaction reads
 * through, so it sees its own writes); each entry keeps the stamp taken
 * before its read, so a write that lands during the read invalidates it.
 *
 * - tokens by hash (with their repository): until the repository's control
 *   stamp moves (a revocation, a goal change; from another process within
 *   the bound of store/changes);
 * - sessions: the lease renewal is written at most every `renewEveryMs`
 *   (the caller passes a fraction of the silent time); in between, the
 *   session (its control) is answered from memory until the control stamp moves;
 * - intent owners (repository and session never change);
 * - the change-log tail after a poll's cursor, and the peers the intent's
 *   last decision named, until the repository's events stamp moves.
 */
const MAX_ENTRIES = 20_000;

function bounded<K, V>() {
  const map = new Map<K, V>();
  return {
    get: (k: K) => map.get(k),
    set: (k: K, v: V) => {
      if (map.size >= MAX_ENTRIES) map.clear(); // a cache, not a store: start over rather than grow
      map.set(k, v);
    },
    delete: (k: K) => map.delete(k),
  };
}

type TokenRow = NonNullable<Awaited<ReturnType<ReturnType<typeof tokens>["byHash"]>>>;
type SessionRow = Awaited<ReturnType<ReturnType<typeof sessions>["renew"]>>;

export function hotOverrides(db: Db): Overrides {
  const { changes } = db;
  const outside = (c: PrismaTx) => c === (db.prisma as unknown);
  const tokenCache = bounded<string, { row: TokenRow; stamp: number }>();
  const sessionCache = bounded<string, { row: SessionRow; stamp: number; writtenAt: number }>();
  const ownerCache = bounded<string, { repoId: string; sessionId: string }>();
  type Tail = Awaited<ReturnType<ReturnType<typeof journal>["tailAfter"]>>;
  /**
   * Per repository, the change log after `from` as of one events stamp: a
   * write wakes every long-poll of the repository at once, and they all ask
   * for the tail after nearly the same cursor. A window answers only when
   * complete: its read returned fewer events than it asked for.
   */
  const windows = bounded<string, { stamp: number; from: number; events: Promise<Tail> }>();
  // Inside a store transaction: prepared statements on its own connection (store/fast); outside, on the read connection.
  const fast = onConnection(statements);
  const out = outsideStatements(db.read);
  const read = statements(db.read);
  /**
   * The renewal's write outside the operation's transaction: on PostgreSQL on the read pool (committed
   * on its own; the transactions' clients may all be waiting for a repository's row lock), on SQLite
   * in the one connection's turn (a write on the side connection would wait for the write lock).
   */
  const outsideOn = onConnection(outsideStatements);
  const renewed = (tokenId: string, key: string, at: Date) =>
    db.provider === "postgres"
      ? out.renew(tokenId, key, at)
      : db.tx(async (c) => outsideOn(c)!.renew(tokenId, key, at));
  const namedCache = bounded<
    string,
    { stamp: number; named: { named: string[]; oldestSeen: Date | null } }
  >();

  /** What a repository answers on handle `c`: the cached reads outside a transaction, the prepared statements inside one, else itself. */
  const on = <R>(c: PrismaTx, base: R, ways: { cached?: () => R; prepared?: (s: Statements) => R }): R => {
    if (outside(c)) return ways.cached?.() ?? base;
    const s = ways.prepared ? fast(c) : null;
    return s && ways.prepared ? ways.prepared(s) : base;
  };

  return {
    claims: (c: PrismaTx) => {
      const base = claims(c);
      return on(c, base, {
        prepared: ({ claims: k }) => ({
          ...base, // methods without a prepared statement run through the transaction's Prisma handle
          pathsOf: k.pathsOf,
          peers: k.peers,
          expired: k.expired,
          set: k.set,
          release: k.release,
        }),
      });
    },
    tokens: (c: PrismaTx, touch: Touch) => {
      const base = tokens(c, touch);
      return on(c, base, {
        cached: () => ({
          ...base,
          byHash: async (tokenHash: string) => {
            const held = tokenCache.get(tokenHash);
            // The stamp is taken before the read; the first read cannot know the repository yet, so it is kept unstamped (-1 never matches).
            const stamp = held ? changes.stamp(held.row.repoId, "control") : -1;
            if (held && held.stamp === stamp) return held.row;
            const row = await out.token(tokenHash);
            if (row) tokenCache.set(tokenHash, { row, stamp: held?.row.repoId === row.repoId ? stamp : -1 });
            else tokenCache.delete(tokenHash);
            return row;
          },
        }),
      });
    },
    sessions: (c: PrismaTx, touch: Touch) => {
      const base = sessions(c, touch);
      return on(c, base, {
        prepared: ({ sessions: k }) => ({ ...base, setClient: k.setClient }),
        cached: () => ({
          ...base,
          renew: async (s: Parameters<typeof base.renew>[0]) => {
            const key = `${s.tokenId}|${s.key}`;
            const at = s.at.getTime();
            const held = sessionCache.get(key);
            const stamp = changes.stamp(s.repoId, "control");
            const due = !held || at < held.writtenAt || at - held.writtenAt >= (s.renewEveryMs ?? 0);
            if (!due && held.stamp === stamp) return { ...held.row, lastSeenAt: s.at };
            // Not due, but the control may have moved: read the row again, write nothing.
            const reread = due ? null : await out.session(s.tokenId, s.key);
            if (reread) {
              sessionCache.set(key, { row: reread, stamp, writtenAt: held!.writtenAt });
              return { ...reread, lastSeenAt: s.at };
            }
            // One statement, not Prisma's two; the first call of a session creates it (Prisma).
            const row = (await renewed(s.tokenId, s.key, s.at)) ?? (await base.renew(s));
            sessionCache.set(key, { row, stamp, writtenAt: at });
            return row;
          },
          get: async (id: string) => out.sessionById(id),
          // Rare (a session's host report changed): written through Prisma, and the cached row follows, so that
          // the next call compares with what was written instead of writing it again.
          setHost: async (...args: Parameters<typeof base.setHost>) => {
            await base.setHost(...args);
            const [s, h, at] = args;
            const held = sessionCache.get(`${s.tokenId}|${s.key}`);
            if (held)
              held.row = {
                ...held.row,
                host: h.host,
                hostVersion: h.hostVersion,
                wiring: h.wiring,
                hostReportedAt: at,
                guardSeenAt: h.guardSeen ? at : held.row.guardSeenAt,
              };
          },
        }),
      });
    },
    intents: (c: PrismaTx, touch: Touch) => {
      const base = intents(c, touch);
      return on(c, base, {
        // The connection's statements themselves: no closure per transaction.
        prepared: ({ intents: i }) => ({
          ...base,
          head: i.head,
          get: i.get,
          active: i.active,
          recent: i.recent,
          completed: i.completed,
          candidates: i.candidates,
          openIdsOfSession: i.openIdsOfSession,
          create: i.create,
          update: i.update,
          addCheckpoint: i.addCheckpoint,
        }),
        cached: () => ({
          ...base,
          get: async (id: string) => read.intents.get(id),
          // A poll's full path reads these outside any transaction (operations/agent/poll): prepared
          // statements on the read connection, not Prisma (~0.5 ms of compilation each, a turn on SQLite).
          active: read.intents.active,
          candidates: read.intents.candidates,
          owner: async (id: string) => {
            const held = ownerCache.get(id);
            if (held) return held;
            const row = await out.owner(id);
            if (row) ownerCache.set(id, row);
            return row;
          },
          namedPeers: async (intentId: string, repoId: string) => {
            const stamp = changes.stamp(repoId, "events");
            const held = namedCache.get(intentId);
            if (held && held.stamp === stamp) return held.named;
            const named = await out.namedPeers(intentId, repoId);
            namedCache.set(intentId, { stamp, named });
            return named;
          },
        }),
      });
    },
    journal: (c: PrismaTx, touch: Touch) => {
      const base = journal(c, touch);
      return on(c, base, {
        prepared: ({ journal: j }) => {
          // The same lock as journal.lock (once per transaction, shared by a batch's members); under it this
          // transaction appends the repository's latest events.
          const raw = rawOf(c)!;
          let locked: string | null = null;
          let appended: Promise<number> | null = null;
          const lock = async (repoId: string) => {
            if (locked) return;
            const held = (raw.held ??= new Set());
            if (!held.has(repoId)) {
              await j.lockRow(repoId);
              held.add(repoId);
            }
            locked = repoId;
            touch(repoId, "events");
          };
          return {
            ...base,
            lock,
            // SQLite: BEGIN IMMEDIATE took the database's write lock, the repository's lock there. PostgreSQL:
            // the lock row, sent by this member or an earlier one of its batch; what is read after it waits for it.
            holds: (repoId: string) => !!raw.sqlite || !!raw.held?.has(repoId),
            addEvent: async (e: Parameters<typeof base.addEvent>[0]) => {
              await lock(e.repoId);
              // Not waited for: the statements after it share its round trip (PostgreSQL).
              appended = j.addEvent({ ...e, peerIds: e.peerIds ?? [] }).seq;
            },
            latestSeq: async (repoId: string) =>
              appended && locked === repoId ? appended : j.latestSeq(repoId),
            lastDecision: j.lastDecision,
            addDecision: j.addDecision,
            addPacket: j.addPacket,
          };
        },
        cached: () => ({
          ...base,
          latestSeq: (repoId: string) => changes.cursor(repoId),
          lastDecision: read.journal.lastDecision,
          tailAfter: async (repoId: string, after: number, take: number) => {
            const stamp = changes.stamp(repoId, "events");
            const held = windows.get(repoId);
            const past = (events: Tail) => events.filter((e) => e.seq > after).slice(0, take);
            if (held?.stamp === stamp && after >= held.from) {
              const events = await held.events;
              if (events.length < take) return past(events);
            }
            // From where the last window started (the waiters' cursors move together), so the ones behind share it too.
            const from = Math.min(after, held?.from ?? after);
            const w = { stamp, from, events: out.tailAfter(repoId, from, take) };
            // Set before the read resolves: the crowd woken with this caller reaches here in the same turn.
            windows.set(repoId, w);
            const events = await w.events.catch((err: unknown) => {
              if (windows.get(repoId) === w) windows.delete(repoId);
              throw err;
            });
            if (events.length < take) return past(events);
            // Too far back for one window: the next one starts at the next caller's cursor.
            if (windows.get(repoId) === w) windows.delete(repoId);
            return from === after ? events : out.tailAfter(repoId, after, take);
          },
        }),
      });
    },
  };
}
