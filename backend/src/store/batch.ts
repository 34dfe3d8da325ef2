import type { Db } from "./db.js";
import type { Raw } from "./handle.js";
import { sendLater, settle, type Exec } from "./sql/exec.js";

/**
 * Group commit: writes to one repository that arrive while one of its
 * transactions runs wait for it, then run together as one transaction, each
 * in a savepoint of its own. Each still commits or fails alone (a failure
 * rolls back to its savepoint, and its caller gets the error); all answer
 * after the one COMMIT, so an acknowledged write is as durable as before.
 *
 * Why: every write takes the repository's lock (store/journal `lock`: it
 * orders claims and the change log), and on PostgreSQL holds it through the
 * commit's WAL flush, so one repository's writes went one flush at a time.
 * A batch pays one BEGIN, one lock wait, one NOTIFY and one flush for all
 * of them; the members after the first find the repository's lock held.
 */
const MAX_BATCH = 16;

interface Member {
  fn: (x: Exec, raw: Raw) => Promise<unknown>;
  done: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
}

/** One statement on the batch's connection (ROLLBACK TO, RELEASE after it). */
const exec = async (raw: Raw, sql: string) => {
  if (raw.sqlite) raw.sqlite.exec(sql);
  else await raw.pg!.query(sql);
};
/** The same, without waiting for the answer on PostgreSQL: it shares the round trip of what follows. */
const send = (raw: Raw, sql: string) => {
  if (raw.sqlite) raw.sqlite.exec(sql);
  else sendLater(raw.pg!, sql);
};
/** PostgreSQL: whether the member's writes sent without waiting all succeeded (store/sql/exec `later`). */
const settled = async (raw: Raw) => {
  if (raw.pg) await settle(raw.pg);
};

export function batcher(db: Db, beforeCommit: (x: Exec, raw: Raw) => Promise<void>) {
  const queues = new Map<string, Member[]>();

  async function drain(key: string, queue: Member[]) {
    while (queue.length) {
      const batch = queue.splice(0, MAX_BATCH);
      const outcomes: Parameters<Member["done"]>[0][] = [];
      try {
        await db.tx(async (x, raw) => {
          // Alone, a write is the transaction: its failure rolls the transaction back (two round trips fewer).
          if (batch.length === 1) outcomes.push({ ok: true, value: await batch[0]!.fn(x, raw) });
          else
            for (const m of batch) {
              // What the members share (the lock held, the hints) as it was before this one.
              const held = new Set(raw.held);
              const hints = new Set(raw.hints);
              send(raw, "SAVEPOINT cohent_member");
              try {
                const value = await m.fn(x, raw);
                // Its writes checked before the savepoint goes (a write can fail its check without
                // aborting the transaction); RELEASE then shares the next statement's round trip.
                await settled(raw);
                send(raw, "RELEASE SAVEPOINT cohent_member");
                outcomes.push({ ok: true, value });
              } catch (error) {
                // Its own work undone, a row lock it took released with it; the batch goes on
                // (a failure to roll back fails the whole batch).
                await settled(raw).catch(() => {});
                await exec(raw, "ROLLBACK TO SAVEPOINT cohent_member");
                await exec(raw, "RELEASE SAVEPOINT cohent_member");
                Object.assign(raw, { held, hints });
                outcomes.push({ ok: false, error });
              }
            }
          await beforeCommit(x, raw);
        });
      } catch (error) {
        // Nothing committed: every member fails with the batch's error.
        for (const m of batch) m.done({ ok: false, error });
        continue;
      }
      batch.forEach((m, i) => m.done(outcomes[i]!));
    }
    queues.delete(key);
  }

  return {
    /** Runs `fn` as its own savepoint in the next transaction of `key`'s batch. */
    run<T>(key: string, fn: (x: Exec, raw: Raw) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const member: Member = {
          fn,
          done: (o) => (o.ok ? resolve(o.value as T) : reject(o.error)),
        };
        const queue = queues.get(key);
        if (queue) return void queue.push(member);
        const fresh = [member];
        queues.set(key, fresh);
        // SQLite runs a whole transaction within one turn, so writes never meet while one runs: the batch
        // starts after the turn's other I/O, with every write that arrived with it.
        if (db.provider === "sqlite") setImmediate(() => void drain(key, fresh));
        else void drain(key, fresh);
      });
    },
  };
}
