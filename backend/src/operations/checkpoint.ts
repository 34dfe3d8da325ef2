import { normalizeRepoPaths, type CheckpointRequest, type CheckpointResponse } from "@cohent/protocol";
import { newId } from "../ids.js";
import type { Caller, Deps } from "./deps.js";
import { claimPaths, closeIntent, refuseClaim } from "./claims.js";
import { addEvent, issuePacket, lockRepository } from "./journal.js";
import { toJson } from "./json.js";
import { ownIntent } from "./views.js";

const CLOSING = new Set(["completed", "abandoned"]);

/**
 * Checkpoint: progress, a block, or completion. Paths on a working or
 * blocked checkpoint go through the same arbitration as scope and replace
 * the claim; on completion they record what was touched, and the claim is
 * released.
 */
export async function checkpoint(deps: Deps, caller: Caller, req: CheckpointRequest): Promise<CheckpointResponse> {
  const paths = req.paths ? normalizeRepoPaths(req.paths) : null;
  const closing = CLOSING.has(req.status);
  const result = await deps.db.tx(async (tx) => {
    const me = await ownIntent(tx, caller, req.intentId);
    await lockRepository(tx, caller.repo.id);
    if (paths && !closing) {
      const { conflicts } = await claimPaths(tx, deps, caller, req.intentId, paths);
      if (conflicts.length) return { conflicts, response: null };
    }
    const now = deps.clock();
    await tx.checkpoint.create({
      data: { id: newId("chk"), intentId: req.intentId, status: req.status, summary: req.summary, paths: paths ? toJson(paths) : null, source: req.pathsSource, createdAt: now },
    });
    const data: { state: string; updatedAt: Date; usage?: string } = { state: req.status, updatedAt: now };
    if (req.usage) data.usage = toJson(req.usage);
    await tx.intent.update({ where: { id: req.intentId }, data });
    await addEvent(tx, deps, { repoId: caller.repo.id, intentId: req.intentId, kind: "checkpoint", summary: `${req.status}: ${req.summary}` });
    if (closing) await closeIntent(tx, deps, caller, req.intentId, req.status, `${req.status}: ${req.summary}`);
    const packet = await issuePacket(tx, deps, caller, {
      kind: "checkpoint", intentId: req.intentId, action: me.lastAction as CheckpointResponse["packet"]["action"],
      reason: `Checkpoint recorded (${req.status}).`, peers: [], decisions: [], changes: [],
    });
    return { conflicts: null, response: { intentId: req.intentId, status: req.status, paths, packet } };
  });
  if (result.conflicts) return refuseClaim(deps, caller, req.intentId, result.conflicts);
  return result.response!;
}
