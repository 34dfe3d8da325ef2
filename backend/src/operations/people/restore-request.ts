import { CohentError, type ShellWriteRestoreResult } from "@cohent/protocol";
import { newId } from "../../ids.js";
import type { Deps } from "../deps.js";
import { notify } from "../shared/queue.js";
import { repoByName } from "../shared/repos.js";

/**
 * A person asks, from the Control Room, that a caught shell write be put
 * back. The bytes from before live only in the writer's checkout, so its
 * adapter does it: its intent gets a `restore-requested` notice with the
 * catch's paths (the adapter restores them when the packet arrives, at its
 * next tool call, as a pause reaches it), recorded and counted as a human
 * command, and the catch is marked (GuardCatch.detail) so the page shows
 * it. Under the repository's lock: a second request while the first stands
 * answers it (`already`) and writes nothing. Refused: a catch of another
 * repository or none (CATCH_NOT_FOUND), one whose bytes were not kept
 * (NOT_RESTORABLE), one reported before the writer had an intent, or whose
 * writer's session has no open intent left to carry it (NO_WRITER_INTENT).
 */
export async function requestRestore(
  deps: Deps,
  input: { repo: string; catchId: string; actor: string },
): Promise<ShellWriteRestoreResult> {
  const repo = await repoByName(deps.store, input.repo);
  return deps.store.tx(async (t) => {
    await t.journal.lock(repo.id);
    const w = await t.reads.shellWrite(input.catchId);
    if (!w || w.repoId !== repo.id) throw new CohentError("CATCH_NOT_FOUND");
    const d = w.detail;
    if (!d?.restorable) throw new CohentError("NOT_RESTORABLE");
    const result = (intentId: string, at: string, by: string, already: boolean) => ({
      id: w.id,
      intentId,
      paths: w.paths,
      requestedAt: at,
      requestedBy: by,
      already,
    });
    if (d.restoreRequestedAt)
      return result(w.intentId, d.restoreRequestedAt, d.restoreRequestedBy ?? "unknown", true);
    if (!w.intentId)
      throw new CohentError(
        "NO_WRITER_INTENT",
        "That catch was reported before the writer published an intent, so no packet can carry a restore request; run the restore command in the writer's checkout.",
      );
    const head = await t.intents.head(w.intentId);
    // A closed intent is told nothing more: the session's open intent, if any, carries the request.
    const intentId = head?.closedAt ? (await t.intents.openIdsOfSession(head.sessionId))[0] : head?.id;
    if (!head || !intentId)
      throw new CohentError(
        "NO_WRITER_INTENT",
        "The writer's work intent has closed and its session has none open to carry a restore request; run the restore command in the writer's checkout.",
        { intentId: w.intentId },
      );
    const at = deps.clock();
    const by = { intentId: null, person: input.actor, client: null, model: null };
    await notify(
      t,
      repo.id,
      { intentId, sessionId: head.sessionId },
      { kind: "restore-requested", paths: w.paths, peer: by },
      at,
    );
    await t.sessions.addCommand({
      id: newId("cmd"),
      repoId: repo.id,
      sessionId: head.sessionId,
      kind: "restore",
      actor: input.actor,
      reason: `Restore of ${w.paths.join(", ")} requested by ${input.actor} from the Control Room.`.slice(
        0,
        500,
      ),
      at,
    });
    const requestedAt = at.toISOString();
    await t.journal.setShellWriteDetail(w.id, {
      ...d,
      restoreRequestedAt: requestedAt,
      restoreRequestedBy: input.actor,
    });
    return result(intentId, requestedAt, input.actor, false);
  });
}
