/**
 * Change notification: per repository, a high-water cursor and a way to wait
 * for the next change. Everything here is a hint; the cursor query (the
 * latest event sequence number) stays the truth, so a missed hint only
 * delays, never loses.
 *
 * Hints come from
 *  (a) this process: the store calls `committed` after each transaction that wrote;
 *  (b) other processes: on SQLite `PRAGMA data_version` of the server's own
 *      connection (it changes when any other connection commits: the admin
 *      CLI, another `cohent serve`, this process's side connection), probed
 *      synchronously before the first cached read of each event-loop turn and every PROBE_MS for waiters;
 *      on PostgreSQL a LISTEN on CHANNEL (one NOTIFY per writing transaction
 *      per repository, sent inside the transaction so it is delivered at commit);
 *  (c) on PostgreSQL a backstop: every BACKSTOP_MS everything counts as changed
 *      unless the listener vouches that no hint was missed (its connection
 *      stayed up and answers now: source `alive`); and every BLIND_BACKSTOP_MS
 *      regardless (a write made past the store sends no NOTIFY). Not on SQLite:
 *      the probe sees every other connection's commit, and the backstop only
 *      woke every waiter and emptied every cache every 2 s for nothing.
 *
 * The bound (how long another process's write can stay invisible to a cache
 * held here): SQLite, for reads the current turn of the event loop (probed
 * at the first read of each turn), PROBE_MS to wake a waiter; PostgreSQL, the NOTIFY's delivery (milliseconds), and BACKSTOP_MS
 * when a notification is lost (listener connection down).
 */

/** `notices`: a notice was written or told (store/notices keeps the untold counts by it). */
export type ChangeKind = "events" | "control" | "notices";
export const CHANGE_KINDS: readonly ChangeKind[] = ["events", "control", "notices"];
/** The PostgreSQL channel; the payload is `<kinds, comma-separated>|<repoId>`. */
export const CHANNEL = "cohent_changes";
export const PROBE_MS = 50;
export const BACKSTOP_MS = 2_000;
/**
 * Every 2 s, everything counting as changed emptied every cache of every instance: on two instances
 * sharing PostgreSQL with 200 agents, each kill-switch read then read its token and session again,
 * and each waiter its notices, some 200 statements a second of the 1,860 the server sent.
 */
export const BLIND_BACKSTOP_MS = 10_000;

export const encodeHint = (repoId: string, kinds: Iterable<ChangeKind>) =>
  `${[...kinds].join(",")}|${repoId}`;
export function decodeHint(payload: string): { repoId: string; kinds: ChangeKind[] } | null {
  const bar = payload.indexOf("|");
  if (bar < 0) return null;
  const kinds = payload
    .slice(0, bar)
    .split(",")
    .filter((k): k is ChangeKind => (CHANGE_KINDS as readonly string[]).includes(k));
  return { repoId: payload.slice(bar + 1), kinds: kinds.length ? kinds : [...CHANGE_KINDS] };
}

export interface ChangeSource {
  /** The truth: the repository's latest event sequence number (0 when none). */
  latestSeq(repoId: string): Promise<number>;
  /** Synchronous check for commits by other connections (SQLite); true when something changed since the last probe. */
  probe?(): boolean;
  /** Starts listening for other instances' hints (PostgreSQL); `lost` is called when hints may have been missed. */
  listen?(hint: (payload: string) => void, lost: () => void): Promise<() => Promise<void>>;
  /**
   * Whether every hint since the last call has reached `listen`'s callback: the listener's connection
   * stayed up and answers now. False when in doubt; no answer in time counts as false.
   */
  alive?(): Promise<boolean>;
}

export interface Changes {
  /**
   * A stamp of the latest change that may concern `kind` in the repository:
   * a value read while the stamp was s is current as long as the stamp is
   * still s. Take the stamp BEFORE reading the value.
   */
  stamp(repoId: string, kind: ChangeKind): number;
  /**
   * The stamp without probing for other processes' commits: for waiters'
   * bookkeeping, which the prober wakes within PROBE_MS (a woken crowd of
   * long-polls would otherwise probe thousands of times per write).
   * Never to validate a cached value.
   */
  peek(repoId: string, kind: ChangeKind): number;
  /**
   * `peek` without the periodic backstop: moved by a hint (this instance's commit, a NOTIFY, a probe,
   * a listener lost), not by the clock. For a waiter deciding whether to read its row again: it reads
   * it on its own schedule anyway (http/agent RECHECK_MS).
   */
  hinted(repoId: string, kind: ChangeKind): number;
  /** The repository's high-water cursor, from memory while nothing changed. */
  cursor(repoId: string): Promise<number>;
  /**
   * The repository's latest sequence number read now, the held cursor raised to it: for a cursor past
   * the held one, which another instance may have given while its hint is still on the way here.
   */
  latest(repoId: string): Promise<number>;
  /** Calls `fn` on every hint that may concern the repository. Returns the unsubscribe. */
  subscribe(repoId: string, fn: () => void): () => void;
  /** Resolves with the cursor as soon as it is past `after`, or with the current cursor after `ms` (or on abort). */
  wait(repoId: string, after: number, ms: number, signal?: AbortSignal): Promise<number>;
  /** This process committed a write of these kinds to the repository. */
  committed(repoId: string, kinds: Iterable<ChangeKind>): void;
  /** Everything may have changed (a hint from elsewhere that names no repository, the backstop). */
  everything(): void;
  /** How long another process's write can stay invisible to a cache held here, in ms (reads; waiters add PROBE_MS on SQLite). */
  readonly boundMs: number;
  close(): Promise<void>;
}

export async function createChanges(
  source: ChangeSource,
  opts: { probeMs?: number; backstopMs?: number; blindMs?: number } = {},
): Promise<Changes> {
  let tick = 1;
  let everythingAt = 0;
  let backstopAt = 0;
  const changedAt = new Map<string, number>(); // `${kind}|${repoId}` -> tick
  const subscribers = new Map<string, Set<() => void>>();
  const cursors = new Map<string, { value: number; stamp: number }>();
  const reading = new Map<string, Promise<number>>();

  const notify = (fns: Iterable<() => void>) => {
    for (const fn of [...fns]) {
      try {
        fn();
      } catch {
        // a subscriber's failure is its own
      }
    }
  };
  const bumpRepo = (repoId: string, kinds: Iterable<ChangeKind>) => {
    tick++;
    for (const kind of kinds) changedAt.set(`${kind}|${repoId}`, tick);
    const subs = subscribers.get(repoId);
    if (subs) notify(subs);
  };
  const bumpAll = () => {
    everythingAt = ++tick;
    for (const subs of [...subscribers.values()]) notify(subs);
  };
  // At most once per turn of the event loop: a write wakes every long-poll of the repository in one turn,
  // and each asks several stamps; one probe answers them all (the bound for reads: one turn).
  let probed = false;
  const reset = () => (probed = false);
  const probeNow = () => {
    if (source.probe?.()) bumpAll();
  };
  const probe = () => {
    if (probed || !source.probe) return;
    probed = true;
    setImmediate(reset).unref();
    probeNow();
  };

  const changes: Changes = {
    stamp(repoId, kind) {
      probe();
      return changes.peek(repoId, kind);
    },
    peek: (repoId, kind) => Math.max(backstopAt, changes.hinted(repoId, kind)),
    hinted: (repoId, kind) => Math.max(everythingAt, changedAt.get(`${kind}|${repoId}`) ?? 0),
    async cursor(repoId) {
      const stamp = changes.stamp(repoId, "events");
      const held = cursors.get(repoId);
      if (held && held.stamp === stamp) return held.value;
      // One read in flight per repository and stamp; later callers share it.
      const key = `${stamp}|${repoId}`;
      let p = reading.get(key);
      if (!p) {
        p = source.latestSeq(repoId).then(
          (value) => {
            reading.delete(key);
            const now = cursors.get(repoId);
            if (!now || now.stamp <= stamp) cursors.set(repoId, { value, stamp });
            return value;
          },
          (err: unknown) => {
            reading.delete(key);
            throw err;
          },
        );
        reading.set(key, p);
      }
      return p;
    },
    async latest(repoId) {
      const value = await source.latestSeq(repoId);
      const held = cursors.get(repoId);
      if (held && held.value < value) cursors.set(repoId, { value, stamp: held.stamp });
      return value;
    },
    subscribe(repoId, fn) {
      let subs = subscribers.get(repoId);
      if (!subs) subscribers.set(repoId, (subs = new Set()));
      subs.add(fn);
      return () => {
        subs.delete(fn);
        if (subs.size === 0 && subscribers.get(repoId) === subs) subscribers.delete(repoId);
      };
    },
    wait(repoId, after, ms, signal) {
      return new Promise<number>((resolve, reject) => {
        let done = false;
        let checking = false;
        let again = false;
        const finish = (value: number | null, err?: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          unsubscribe();
          signal?.removeEventListener("abort", onAbort);
          if (err !== undefined) reject(err);
          else if (value !== null) resolve(value);
          else changes.cursor(repoId).then(resolve, reject);
        };
        const check = async () => {
          if (checking) return void (again = true);
          checking = true;
          try {
            do {
              again = false;
              const value = await changes.cursor(repoId);
              if (value > after) return finish(value);
            } while (again && !done);
          } catch (err) {
            finish(null, err);
          } finally {
            checking = false;
          }
        };
        const onAbort = () => finish(null);
        const unsubscribe = changes.subscribe(repoId, () => void check());
        const timer = setTimeout(() => finish(null), Math.max(0, ms));
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        void check();
      });
    },
    committed: bumpRepo,
    everything: bumpAll,
    boundMs: source.probe ? 0 : (opts.backstopMs ?? BACKSTOP_MS),
    close: async () => {
      clearInterval(prober);
      if (backstop) clearInterval(backstop);
      await stopListening?.();
    },
  };

  // Waiters need the other processes' writes without a read to trigger the probe.
  // Not the reads' once-per-turn probe: a turn whose timers ran this one then waits for I/O, and a
  // request that arrives meanwhile, sent after another process's commit, must still probe.
  const prober = setInterval(probeNow, opts.probeMs ?? PROBE_MS);
  prober.unref();
  const backstopMs = opts.backstopMs ?? BACKSTOP_MS;
  const blindMs = opts.blindMs ?? BLIND_BACKSTOP_MS;
  let blindAt = Date.now();
  let asking = false;
  const everythingOnTheClock = () => {
    backstopAt = ++tick;
    for (const subs of [...subscribers.values()]) notify(subs);
  };
  const backstop = source.probe
    ? null
    : setInterval(() => {
        if (asking) return; // the last question is still out: its answer (or its time limit) decides
        const alive = source.alive?.bind(source);
        const blind = !alive || Date.now() - blindAt >= blindMs;
        if (blind) {
          blindAt = Date.now();
          return everythingOnTheClock();
        }
        asking = true;
        let timer: NodeJS.Timeout | undefined;
        void Promise.race([
          alive(),
          new Promise<false>((r) => (timer = setTimeout(() => r(false), backstopMs / 2).unref())),
        ])
          .finally(() => clearTimeout(timer))
          .then(
            (ok) => {
              asking = false;
              if (!ok) everythingOnTheClock();
            },
            () => {
              asking = false;
              everythingOnTheClock();
            },
          );
      }, backstopMs);
  backstop?.unref();
  const stopListening = await source.listen?.((payload) => {
    const hint = decodeHint(payload);
    if (hint) bumpRepo(hint.repoId, hint.kinds);
    else bumpAll();
  }, bumpAll);
  return changes;
}
