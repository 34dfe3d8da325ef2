import {
  BOUNDS,
  CohentError,
  normalizeRepoPaths,
  type GuardRequest,
  type GuardResponse,
  type ShellWriteDetail,
} from "@cohent/protocol";
import { Buckets } from "../../http/rate-limit.js";
import { newId } from "../../ids.js";
import type { Store } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { shellCommandText } from "../shared/free-text.js";
import { noticePeer, notify } from "../shared/queue.js";
import { ownHead } from "../shared/views.js";
import { baseStore } from "../../store/identity.js";

/** Per reporting session, in this instance's memory (as release requests): each report puts notices into peers' packets. */
const limits = new WeakMap<Store, Buckets>();
function rateLimit(store: Store, sessionId: string): void {
  let b = limits.get(baseStore(store));
  if (!b) {
    const perMinute = BOUNDS.shellWriteReportsPerMinute;
    limits.set(baseStore(store), (b = new Buckets({ perSecond: perMinute / 60, burst: perMinute })));
  }
  const wait = b.take(sessionId);
  if (wait > 0)
    throw new CohentError(
      "RATE_LIMITED",
      `At most ${BOUNDS.shellWriteReportsPerMinute} shell-write reports a minute; retry after ${wait} s.`,
      { retryAfterSeconds: wait },
    );
}

/** Each peer named once, its paths normalized like every path (a peer named twice: its paths together). */
function peersOf(req: GuardRequest): { intentId: string; paths: string[] }[] {
  const by = new Map<string, string[]>();
  for (const p of req.peers ?? []) {
    const paths = normalizeRepoPaths(p.paths);
    const seen = by.get(p.intentId) ?? [];
    by.set(p.intentId, [...seen, ...paths.filter((x) => !seen.includes(x))]);
  }
  return [...by].map(([intentId, paths]) => ({ intentId, paths }));
}

/**
 * Guard report, kind `shell-write`: a shell (or opaque MCP) call of the
 * caller changed files that peers hold, caught by its adapter after the
 * call. In one transaction: the catch is recorded (the metrics count it, the
 * Control Room lists it), and each peer intent named that is still open gets
 * a `shell-write` notice in its next packet, with the command as untrusted
 * text and whether the writer's checkout can restore the bytes. A peer that
 * is no intent of this repository is INVALID_INPUT, as is the writer's own
 * intent named as a peer; a closed one is skipped (nobody left to tell).
 * RATE_LIMITED past BOUNDS.shellWriteReportsPerMinute per session (the
 * writer's model is told by its adapter either way).
 */
export async function shellWriteReport(
  deps: Deps,
  caller: Caller,
  req: GuardRequest,
): Promise<GuardResponse> {
  const peers = peersOf(req);
  const paths = normalizeRepoPaths(req.paths);
  // Bad input is refused above before it spends one of the session's reports.
  rateLimit(deps.store, caller.session.id);
  for (const p of peers) paths.push(...p.paths.filter((x) => !paths.includes(x)));
  const command = shellCommandText(req.command);
  const restorable = req.restorable === true;
  const repoId = caller.repo.id;
  return deps.store.tx(
    async (t) => {
      if (req.intentId) await ownHead(t, caller, req.intentId, { open: false });
      const told: { intentId: string; sessionId: string; paths: string[] }[] = [];
      for (const p of peers) {
        // Noticed between calls, the reporter is no writer: its own claim may be the one changed.
        if (p.intentId === req.intentId && !req.between)
          throw new CohentError("INVALID_INPUT", `peers names the writer's own intent ${p.intentId}.`);
        const head = await t.intents.head(p.intentId);
        if (!head || head.repoId !== repoId)
          throw new CohentError("INVALID_INPUT", `${p.intentId} is not an intent of this repository.`, {
            intentId: p.intentId,
          });
        if (!head.closedAt) told.push({ ...p, sessionId: head.sessionId });
      }
      const writer = noticePeer({
        intentId: req.intentId ?? null,
        person: caller.token.person,
        client: caller.session.client ?? caller.token.client,
        model: caller.session.model,
      });
      const detail: ShellWriteDetail = {
        command,
        restorable,
        ...(req.between ? { between: true } : {}),
        person: writer.person,
        client: writer.client,
        model: writer.model,
        peers: told.map((p) => ({ intentId: p.intentId, paths: p.paths })),
      };
      const at = deps.clock();
      await t.journal.addGuardCatch({
        id: newId("gc"),
        repoId,
        intentId: req.intentId ?? "",
        agentId: caller.agentId ?? null,
        kind: "shell-write",
        paths,
        peerIds: told.map((p) => p.intentId),
        detail,
        at,
      });
      const reason = `${req.between ? "between-" : ""}${restorable ? "restorable" : "not-restorable"}`;
      // The reporter's own claim (noticed between calls) gets no notice: its adapter tells its model itself.
      for (const p of told.filter((x) => x.intentId !== req.intentId))
        await notify(
          t,
          repoId,
          p,
          { kind: "shell-write", paths: p.paths, peer: writer, note: command, reason },
          at,
        );
      return { recorded: true };
    },
    { batch: repoId },
  );
}
