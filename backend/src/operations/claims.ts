import { CohentError, type ScopeConflict } from "@cohent/protocol";
import { newId } from "../ids.js";
import { leaseCutoff } from "../lease.js";
import { arbitrate, describeConflicts } from "../scope.js";
import type { Tx } from "../store/db.js";
import type { Caller, Deps } from "./deps.js";
import { addEvent, lockRepository } from "./journal.js";
import { parseJson, toJson } from "./json.js";
import { recordOf } from "./views.js";

/**
 * Claims `paths` for an intent, replacing its previous claim. Atomic: it
 * first takes the repository's write lock (lockRepository), so overlapping
 * claims racing from any number of backend instances are decided one after
 * another. Returns the conflicts instead of writing.
 */
export async function claimPaths(
  tx: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  paths: string[],
): Promise<{ conflicts: ScopeConflict[]; replaced: string[] }> {
  await lockRepository(tx, caller.repo.id);
  await freeExpiredClaims(tx, deps, caller.repo.id);

  const previous = await tx.claim.findUnique({ where: { intentId } });
  const replaced = parseJson<string[]>(previous?.paths, []);
  const peers = await tx.claim.findMany({
    where: { repoId: caller.repo.id, intentId: { not: intentId } },
    include: { intent: { select: { person: true, client: true, model: true, record: true } } },
    orderBy: { updatedAt: "asc" },
  });
  const conflicts = arbitrate(
    paths,
    peers.map((c) => ({
      intentId: c.intentId, person: c.intent.person, client: c.intent.client, model: c.intent.model,
      objective: recordOf(c.intent)?.objective ?? null, paths: parseJson<string[]>(c.paths, []),
    })),
    { caseInsensitive: caller.repo.caseInsensitive },
  );
  if (conflicts.length) return { conflicts, replaced };

  const now = deps.clock();
  if (paths.length === 0) {
    if (previous) await tx.claim.delete({ where: { intentId } });
  } else {
    await tx.claim.upsert({
      where: { intentId },
      create: { intentId, repoId: caller.repo.id, paths: toJson(paths), updatedAt: now },
      update: { paths: toJson(paths), updatedAt: now },
    });
  }
  await addEvent(tx, deps, {
    repoId: caller.repo.id, intentId, kind: paths.length ? "scope.claimed" : "scope.released",
    summary: paths.length ? `claimed ${paths.join(", ")}` : "released its scope",
  });
  return { conflicts: [], replaced };
}

/** An expired lease frees its scopes: peers may claim those paths again. */
async function freeExpiredClaims(tx: Tx, deps: Deps, repoId: string): Promise<void> {
  const expired = await tx.claim.findMany({
    where: { repoId, intent: { session: { lastSeenAt: { lt: leaseCutoff(deps.clock(), deps.lease) } } } },
    select: { intentId: true },
  });
  for (const { intentId } of expired) {
    await tx.claim.delete({ where: { intentId } });
    await addEvent(tx, deps, { repoId, intentId, kind: "scope.released", summary: "lease expired; scope freed" });
  }
}

/** Records a refused claim (a path-guard catch) and throws the conflict. Runs after the claim transaction. */
export async function refuseClaim(deps: Deps, caller: Caller, intentId: string, conflicts: ScopeConflict[]): Promise<never> {
  await deps.db.tx((tx) =>
    tx.guardCatch.create({
      data: {
        id: newId("gc"), repoId: caller.repo.id, intentId, kind: "scope-conflict",
        paths: toJson([...new Set(conflicts.flatMap((c) => c.paths))]), peerIds: toJson(conflicts.map((c) => c.intentId)),
        createdAt: deps.clock(),
      },
    }),
  );
  throw new CohentError("SCOPE_CONFLICT", `Scope conflict: ${describeConflicts(conflicts)}.`, { conflicts });
}

/** Closes an intent (completed, abandoned, superseded) and releases its scope. */
export async function closeIntent(tx: Tx, deps: Deps, caller: Caller, intentId: string, state: string, summary: string): Promise<void> {
  const now = deps.clock();
  await tx.intent.update({ where: { id: intentId }, data: { state, closedAt: now, updatedAt: now } });
  const released = await tx.claim.deleteMany({ where: { intentId } });
  await addEvent(tx, deps, { repoId: caller.repo.id, intentId, kind: `intent.${state}`, summary });
  if (released.count) await addEvent(tx, deps, { repoId: caller.repo.id, intentId, kind: "scope.released", summary: `released its scope (${state})` });
}

export function assertControllable(caller: Caller): void {
  if (caller.session.control === "paused") throw new CohentError("SESSION_PAUSED", caller.session.controlReason ?? undefined);
  if (caller.session.control === "cancelled") throw new CohentError("SESSION_CANCELLED", caller.session.controlReason ?? undefined);
}
