import { LIVE_EVENT, LIVE_PATH } from "@cohent/protocol/console-constants";
import type { LiveChange } from "@cohent/protocol";

/**
 * The live feed: one EventSource per tab, subscribed to what is on screen: a repository's pages to
 * that repository (its change log and its own version), every other page to the summary version only.
 * Every change event bumps `version`; pages refetch what they show when it moves. `topic` is the
 * subscription, `repos` the repositories whose events this subscription has received (one at most).
 * The clock ticks so that "12 s ago" and guard states age without a reload.
 */
export const live = $state({
  version: 0,
  connected: false,
  now: Date.now(),
  topic: null as string | null,
  repos: [] as string[],
});

let source: EventSource | null = null;
let ticker: ReturnType<typeof setInterval> | null = null;

/** Subscribes to `repo` (owner/name), or to the summary when null; a new subscription replaces the old. */
export function connectLive(repo: string | null): void {
  if (source && live.topic === repo) return;
  source?.close();
  live.topic = repo;
  live.repos = [];
  live.connected = false;
  const es = new EventSource(repo ? `${LIVE_PATH}?repo=${encodeURIComponent(repo)}` : LIVE_PATH);
  source = es;
  es.addEventListener(LIVE_EVENT, (e) => {
    if (source !== es) return;
    try {
      const change = JSON.parse((e as MessageEvent<string>).data) as LiveChange;
      if (change.repo && !live.repos.includes(change.repo)) live.repos = [...live.repos, change.repo];
    } catch {
      // A change without a body still moves the version.
    }
    live.version += 1;
  });
  es.onopen = () => {
    if (source === es) live.connected = true;
  };
  es.onerror = () => {
    if (source === es) live.connected = false;
  };
  ticker ??= setInterval(() => {
    live.now = Date.now();
  }, 5_000);
}

export function disconnectLive(): void {
  source?.close();
  source = null;
  live.topic = null;
  live.connected = false;
}
