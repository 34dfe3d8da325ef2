import { CohentError, type ScopeConflict } from "@cohent/protocol";
import { arbitrate, describeConflicts } from "../../core/arbitrate.js";
import { leaseCutoff } from "../../core/lease.js";
import { newId } from "../../ids.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";

/**
 * Claims `paths` for an intent, replacing its previous claim. Atomic: it
 * first takes the repository's write lock, so overlapping claims racing
 * from any number of backend instances are decided one after another.
 * Returns the conflicts instead of writing.
 */
export async function claimPaths(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  paths: string[],
): Promise<{ conflicts: ScopeConflict[]; replaced: string[] }> {
  const repoId = caller.repo.id;
  await t.journal.lock(repoId);
  const now = deps.clock();
  // An expired lease frees its scopes: peers may claim those paths again.
  for (const expired of await t.claims.expired(repoId, leaseCutoff(now, deps.lease))) {
    await t.claims.release(expired);
    await t.journal.addEvent({
      repoId,
      intentId: expired,
      kind: "scope.released",
      summary: "lease expired; scope freed",
      at: now,
    });
  }
  const previous = await t.claims.pathsOf(intentId);
  const replaced = previous ?? [];
  const conflicts = arbitrate(paths, await t.claims.peers(repoId, intentId), {
    caseInsensitive: caller.repo.caseInsensitive,
  });
  if (conflicts.length) return { conflicts, replaced };

  if (paths.length) await t.claims.set({ intentId, repoId, paths, at: now });
  else if (previous) await t.claims.release(intentId);
  await t.journal.addEvent({
    repoId,
    intentId,
    kind: paths.length ? "scope.claimed" : "scope.released",
    summary: paths.length ? `claimed ${paths.join(", ")}` : "released its scope",
    at: now,
  });
  return { conflicts: [], replaced };
}

/** Records a refused claim (a path-guard catch) and throws the conflict. Runs after the claim transaction. */
export async function refuseClaim(
  deps: Deps,
  caller: Caller,
  intentId: string,
  conflicts: ScopeConflict[],
): Promise<never> {
  await deps.store.journal.addGuardCatch({
    id: newId("gc"),
    repoId: caller.repo.id,
    intentId,
    agentId: caller.agentId ?? null,
    kind: "scope-conflict",
    paths: [...new Set(conflicts.flatMap((c) => c.paths))],
    peerIds: conflicts.map((c) => c.intentId),
    at: deps.clock(),
  });
  throw new CohentError("SCOPE_CONFLICT", `Scope conflict: ${describeConflicts(conflicts)}.`, { conflicts });
}

/** Runs a claiming transaction; a conflict is recorded and thrown after it rolls back nothing. */
export async function withClaim<T>(
  deps: Deps,
  caller: Caller,
  intentId: string,
  fn: (t: Tx) => Promise<T | { conflicts: ScopeConflict[] }>,
): Promise<T> {
  const result = await deps.store.tx(fn);
  if (result && typeof result === "object" && "conflicts" in result)
    return refuseClaim(deps, caller, intentId, result.conflicts);
  return result;
}

/** Closes an intent (completed, abandoned, superseded) and releases its scope. */
export async function closeIntent(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  state: string,
  summary: string,
): Promise<void> {
  const now = deps.clock();
  const repoId = caller.repo.id;
  await t.intents.update(intentId, { state, closedAt: now, updatedAt: now });
  const released = await t.claims.release(intentId);
  await t.journal.addEvent({ repoId, intentId, kind: `intent.${state}`, summary, at: now });
  if (released)
    await t.journal.addEvent({
      repoId,
      intentId,
      kind: "scope.released",
      summary: `released its scope (${state})`,
      at: now,
    });
}

export function assertControllable(caller: Caller): void {
  if (caller.session.control === "paused")
    throw new CohentError("SESSION_PAUSED", caller.session.controlReason ?? undefined);
  if (caller.session.control === "cancelled")
    throw new CohentError("SESSION_CANCELLED", caller.session.controlReason ?? undefined);
}
