import type { Store } from "../store/index.js";
import { baseStore } from "../store/identity.js";

export type RecentEvent = Awaited<ReturnType<Store["journal"]["tailAfter"]>>[number];

/** Events held per repository: a waiter behind all of them reads the store itself. */
const KEEP = 2_048;
/** One read's size while catching up. */
const READ = 500;

interface Feed {
  /** Every event with base < seq <= top is in `events`, in order. */
  base: number;
  top: number;
  events: RecentEvent[];
  /** The events stamp taken before the read that brought `top`. */
  stamp: number;
  reading: Promise<void> | null;
}

/**
 * The change log's latest events per repository, in this process's memory,
 * for the long-polls. Each write wakes every waiter of the repository (200
 * with 200 agents), and each asked the store for the events after its cursor:
 * 33 000 reads in a 20 s window on SQLite, every one synchronous (the
 * event loop's biggest block under load), and on PostgreSQL 200 pooled
 * queries per write. Here the events after the newest held one are read once
 * per change stamp (store/changes), by whoever asks first, and everyone
 * answers from memory. A snapshot, as the store's read is: complete from
 * `after` up to the newest event it holds, which is at least `upTo` when asked.
 */
export function recentEvents(store: Store) {
  const feeds = new Map<string, Feed>();

  const refresh = (repoId: string, f: Feed): Promise<void> => {
    f.reading ??= (async () => {
      try {
        const stamp = store.changes.stamp(repoId, "events");
        for (;;) {
          const got = await store.journal.tailAfter(repoId, f.top, READ);
          for (const e of got) if (e.seq > f.top) f.events.push(e);
          if (got.length) f.top = Math.max(f.top, got[got.length - 1]!.seq);
          if (got.length < READ) break;
        }
        f.stamp = stamp;
        if (f.events.length > KEEP) {
          const dropped = f.events.splice(0, f.events.length - KEEP);
          f.base = dropped[dropped.length - 1]!.seq;
        }
      } finally {
        f.reading = null;
      }
    })();
    return f.reading;
  };

  return {
    /**
     * The first `take` events after `after`, complete up to at least `upTo` (a cursor the caller saw);
     * null when `after` is older than what is held (ask the store).
     */
    async after(repoId: string, after: number, take: number, upTo = 0): Promise<RecentEvent[] | null> {
      let f = feeds.get(repoId);
      // The first waiter of a repository starts it at its cursor: long-polls ask near the head.
      if (!f) feeds.set(repoId, (f = { base: after, top: after, events: [], stamp: -1, reading: null }));
      if (after < f.base) return null;
      // A read for a new stamp; while short of what the caller saw, more (a read in flight may have
      // started before it): at most three, then the caller polls again at the next hint.
      if (f.stamp !== store.changes.stamp(repoId, "events")) await refresh(repoId, f);
      for (let i = 0; f.top < upTo && i < 3; i++) await refresh(repoId, f);
      if (after < f.base) return null;
      const out: RecentEvent[] = [];
      // Binary search for the first event after `after`.
      let lo = 0;
      let hi = f.events.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (f.events[mid]!.seq > after) hi = mid;
        else lo = mid + 1;
      }
      for (let i = lo; i < f.events.length && out.length < take; i++) out.push(f.events[i]!);
      return out;
    },
  };
}

const byStore = new WeakMap<Store, ReturnType<typeof recentEvents>>();
/** The one feed of a store. */
export const recentOf = (store: Store) => {
  let r = byStore.get(baseStore(store));
  if (!r) byStore.set(baseStore(store), (r = recentEvents(store)));
  return r;
};
