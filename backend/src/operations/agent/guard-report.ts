import { normalizeRepoPaths, type GuardRequest, type GuardResponse } from "@cohent/protocol";
import { newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";
import { ownHead } from "../shared/views.js";

/** Guard report: records a refusal the adapter made on its own (outside-scope writes, edits before an intent, …). */
export async function guardReport(deps: Deps, caller: Caller, req: GuardRequest): Promise<GuardResponse> {
  const paths = normalizeRepoPaths(req.paths);
  return deps.store.tx(
    async (t) => {
      if (req.intentId) await ownHead(t, caller, req.intentId, { open: false });
      await t.journal.addGuardCatch({
        id: newId("gc"),
        repoId: caller.repo.id,
        intentId: req.intentId ?? "",
        agentId: caller.agentId ?? null,
        kind: req.kind,
        paths,
        peerIds: [],
        at: deps.clock(),
      });
      return { recorded: true };
    },
    { batch: caller.repo.id },
  );
}
