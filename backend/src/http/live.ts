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
export function liveFeed(deps: Deps) {
  const listeners = new Set<(version: string) => void>();
  let timer: NodeJS.Timeout | null = null;
  let version = "";
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const next = await changeFingerprint(deps);
      if (next !== version) for (const fn of listeners) fn((version = next));
    } catch (err) {
      deps.log.warn({ err }, "live feed poll failed");
    } finally {
      busy = false;
    }
  };
  return (fn: (version: string) => void): (() => void) => {
    listeners.add(fn);
    timer ??= setInterval(() => void tick(), POLL_MS);
    return () => {
      listeners.delete(fn);
      if (listeners.size > 0 || !timer) return;
      clearInterval(timer);
      timer = null;
    };
  };
}

/** The console's live stream: one server-sent `change` event per new fingerprint, and a heartbeat. */
export function liveStream(subscribe: ReturnType<typeof liveFeed>) {
  return async (ctx: Context) => {
    ctx.status = 200;
    ctx.respond = false;
    ctx.req.socket.setTimeout(0);
    ctx.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
    ctx.res.write("retry: 1000\n\n");
    const unsubscribe = subscribe((version) => ctx.res.write(`event: ${LIVE_EVENT}\ndata: ${JSON.stringify({ version } satisfies LiveChange)}\n\n`));
    const heartbeat = setInterval(() => ctx.res.write(": keep-alive\n\n"), 15_000);
    await new Promise<void>((resolve) => ctx.res.once("close", resolve));
    clearInterval(heartbeat);
    unsubscribe();
  };
}
