import type { Changes } from "../store/index.js";

/**
 * Resolves at the next hint that one of `repoIds` may have changed (its
 * change log or its control state, written by this instance, another
 * instance or the admin CLI; see store/changes), after `ms`, or on abort.
 * Only a hint: the caller then asks the cursor query what is new, so a hint
 * that is missed delays it at most to the store's backstop, never loses it.
 */
export function nextChange(
  changes: Changes,
  repoIds: Iterable<string>,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const unsubscribers: (() => void)[] = [];
    const done = () => {
      clearTimeout(timer);
      for (const off of unsubscribers) off();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    for (const repoId of repoIds) unsubscribers.push(changes.subscribe(repoId, done));
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The stamps of `repoIds` (store/changes): taken before a read, an unchanged value after it means no hint
 * arrived meanwhile. Not probed: a waiter learns of another process's commit from the prober.
 */
export function stampOf(changes: Changes, repoIds: Iterable<string>): string {
  return [...repoIds].map((r) => `${changes.peek(r, "events")}.${changes.peek(r, "control")}`).join(",");
}
