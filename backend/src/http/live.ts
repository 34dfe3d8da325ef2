import type { Context } from "koa";
import { LIVE_EVENT, type LiveChange } from "@cohent/protocol";
import type { Deps } from "../operations/deps.js";
import { changeFingerprint } from "../operations/people/overview.js";

const POLL_MS = 400;

/**
 * One poller per server for every open console stream: it reads the change
 * fingerprint (the Event table's last seq and friends) a few times a second
 * while anyone listens, so a change reaches browsers within about a second
 * whichever backend instance or CLI process wrote it.
 */
export class LiveFeed {
  private listeners = new Set<(version: string) => void>();
  private timer: NodeJS.Timeout | null = null;
  private version = "";
  private busy = false;

  constructor(private deps: Deps) {}

  subscribe(fn: (version: string) => void): () => void {
    this.listeners.add(fn);
    if (!this.timer) this.timer = setInterval(() => void this.tick(), POLL_MS);
    return () => {
      this.listeners.delete(fn);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const version = await changeFingerprint(this.deps);
      if (version !== this.version) {
        this.version = version;
        for (const fn of this.listeners) fn(version);
      }
    } catch (err) {
      this.deps.log.warn({ err }, "live feed poll failed");
    } finally {
      this.busy = false;
    }
  }
}

/** The console's live stream: one server-sent `change` event per new fingerprint, and a heartbeat. */
export function liveStream(feed: LiveFeed) {
  return async (ctx: Context) => {
    ctx.status = 200;
    ctx.respond = false;
    ctx.req.socket.setTimeout(0);
    ctx.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
    ctx.res.write("retry: 1000\n\n");
    const unsubscribe = feed.subscribe((version) => ctx.res.write(`event: ${LIVE_EVENT}\ndata: ${JSON.stringify({ version } satisfies LiveChange)}\n\n`));
    const heartbeat = setInterval(() => ctx.res.write(": keep-alive\n\n"), 15_000);
    await new Promise<void>((resolve) => ctx.res.once("close", resolve));
    clearInterval(heartbeat);
    unsubscribe();
  };
}
