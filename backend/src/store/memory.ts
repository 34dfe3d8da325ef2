import type { ChangeKind } from "./changes.js";
import type { Handle } from "./handle.js";

/**
 * The hot path's memory: what the agent calls read on every call, held per
 * store and checked against the change stamps (store/changes) instead of
 * read again. A cache answers only outside a transaction (a transaction reads
 * through, so it sees its own writes); each entry keeps the stamp taken
 * before its read, so a write that lands during the read invalidates it.
 * The methods that use it say so: tokens (sessions.ts), session renewals
 * (sessions.ts), intent owners and named peers (intents.ts), the change-log
 * tail (journal.ts), untold notices (notices.ts).
 */
const MAX_ENTRIES = 20_000;

export interface Bounded<K, V> {
  get(k: K): V | undefined;
  set(k: K, v: V): void;
  delete(k: K): boolean;
}

function bounded<K, V>(): Bounded<K, V> {
  const map = new Map<K, V>();
  return {
    get: (k) => map.get(k),
    set: (k, v) => {
      if (map.size >= MAX_ENTRIES) map.clear(); // a cache, not a store: start over rather than grow
      map.set(k, v);
    },
    delete: (k) => map.delete(k),
  };
}

export type Memory = <K, V>(name: string) => Bounded<K, V>;

/** One store's caches, by name. */
export function createMemory(): Memory {
  const maps = new Map<string, Bounded<unknown, unknown>>();
  return <K, V>(name: string) => {
    let m = maps.get(name);
    if (!m) maps.set(name, (m = bounded()));
    return m as Bounded<K, V>;
  };
}

export const cached = {
  /** A value that never changes once it exists (null is not kept). */
  async kept<V>(h: Handle, name: string, key: string, load: () => Promise<V | null>): Promise<V | null> {
    if (h.tx) return load();
    const m = h.mem<string, V>(name);
    const held = m.get(key);
    if (held) return held;
    const v = await load();
    if (v) m.set(key, v);
    return v;
  },
  /** A value current while the repository's `kind` stamp stays what it was before the read. */
  async stamped<V>(
    h: Handle,
    name: string,
    key: string,
    repoId: string,
    kind: ChangeKind,
    load: () => Promise<V>,
  ): Promise<V> {
    if (h.tx) return load();
    const m = h.mem<string, { stamp: number; value: V }>(name);
    const stamp = h.changes.stamp(repoId, kind);
    const held = m.get(key);
    if (held && held.stamp === stamp) return held.value;
    const value = await load();
    m.set(key, { stamp, value });
    return value;
  },
};
