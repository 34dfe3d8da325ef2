import { LIVE_EVENT, LIVE_PATH } from "@cohent/protocol/console-constants";

/**
 * The live feed: one EventSource per tab. Every change event bumps `version`;
 * pages refetch what they show when it moves. The clock ticks so that
 * "12 s ago" and guard states age without a reload.
 */
export const live = $state({ version: 0, connected: false, now: Date.now() });

let source: EventSource | null = null;
let ticker: ReturnType<typeof setInterval> | null = null;

export function connectLive(): void {
  if (source) return;
  source = new EventSource(LIVE_PATH);
  source.addEventListener(LIVE_EVENT, () => {
    live.version += 1;
  });
  source.onopen = () => {
    live.connected = true;
  };
  source.onerror = () => {
    live.connected = false;
  };
  ticker ??= setInterval(() => {
    live.now = Date.now();
  }, 5_000);
}

export function disconnectLive(): void {
  source?.close();
  source = null;
  live.connected = false;
}
