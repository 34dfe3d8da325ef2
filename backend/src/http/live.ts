import type { Context } from "koa";
import { LIVE_EVENT, type LiveChange } from "@cohent/protocol";
import type { Deps } from "../operations/deps.js";
import type { Repo } from "../store/index.js";
import { changeFingerprint } from "../operations/people/overview.js";
import { nextChange, stampOf } from "../live/next-change.js";

/** How late a change no wake-up announced (the admin CLI, a lost NOTIFY) reaches an open stream. */
const BACKSTOP_MS = 1_000;
const BATCH = 500;

/**
 * The resume point of a stream: each repository's last delivered sequence
 * number, as `repoId:seq,…`. Per repository, because a repository's events
 * commit in sequence order (its write lock), while two repositories' events
 * on PostgreSQL may commit out of order: one global number could skip one.
 */
export function parseResume(raw: string | undefined): Map<string, number> | null {
  if (!raw || raw.length > 16_384) return null;
  const map = new Map<string, number>();
  for (const part of raw.split(",")) {
    const m = part.match(/^([A-Za-z0-9_-]{1,64}):(\d{1,15})$/);
    if (!m) return null;
    map.set(m[1]!, Number(m[2]));
  }
  return map;
}
const formatResume = (map: Map<string, number>) => [...map].map(([r, s]) => `${r}:${s}`).join(",");

/**
 * The console's live stream, per subscription: what the page on screen shows, nothing else.
 *
 * A repository's pages (`repo`): its change log, every entry sent once, in order, with an SSE id that
 * is the resume point: a browser that reconnects (to any instance) sends it back as Last-Event-ID and
 * gets exactly what it missed, no gap and no repeat. Changes of that repository outside the change log
 * (its sessions' calls, tokens, pairings, catches, wiring, goal) arrive as id-less `change` events when
 * its fingerprint (store/repo-pages) moves. Woken by that repository's change hints alone.
 *
 * The repository list (`repo` null): only the summary, an id-less `change` whenever the fingerprint of
 * everything moves (at the 1 s backstop): no repository's events, so a page never receives another
 * repository's, and a stream never reads a thousand repositories' change logs on every wake-up.
 */
export function liveStream(deps: Deps) {
  return async (ctx: Context, repo: Repo | null) => {
    const resumed = parseResume(
      ctx.get("last-event-id") ||
        (typeof ctx.query.lastEventId === "string" ? ctx.query.lastEventId : undefined),
    );
    const watched = repo ? [repo.id] : [];
    const cursors = new Map<string, number>();
    if (repo) cursors.set(repo.id, resumed?.get(repo.id) ?? (await deps.store.journal.latestSeq(repo.id)));
    const fingerprint = () => (repo ? deps.store.repoPages.fingerprint(repo.id) : changeFingerprint(deps));
    let version = await fingerprint();

    ctx.status = 200;
    ctx.respond = false;
    ctx.req.socket.setTimeout(0);
    ctx.res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    ctx.res.write("retry: 1000\n\n");
    const send = (data: LiveChange, id?: string) =>
      ctx.res.write(`${id ? `id: ${id}\n` : ""}event: ${LIVE_EVENT}\ndata: ${JSON.stringify(data)}\n\n`);
    send({ version });

    const closed = new AbortController();
    ctx.res.once("close", () => closed.abort());
    const heartbeat = setInterval(() => ctx.res.write(": keep-alive\n\n"), 15_000);
    try {
      while (!closed.signal.aborted) {
        const stamp = stampOf(deps.store.changes, watched);
        try {
          for (const [repoId, after] of cursors) {
            let cursor = after;
            for (;;) {
              const events = await deps.store.journal.eventsAfter(repoId, cursor, BATCH);
              for (const e of events) {
                cursors.set(repoId, (cursor = e.seq));
                send(
                  { version: `${e.seq}`, repo: repo!.name, seq: e.seq, kind: e.kind },
                  formatResume(cursors),
                );
              }
              if (events.length < BATCH || closed.signal.aborted) break;
            }
          }
          const next = await fingerprint();
          if (next !== version) send({ version: (version = next) });
        } catch (err) {
          deps.log.warn({ err: String(err) }, "live stream read failed; retrying");
        }
        if (stampOf(deps.store.changes, watched) === stamp)
          await nextChange(deps.store.changes, watched, BACKSTOP_MS, closed.signal);
      }
    } finally {
      clearInterval(heartbeat);
    }
  };
}
