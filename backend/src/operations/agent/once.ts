import { createHash } from "node:crypto";
import { CohentError, REQUEST_ID_RETENTION_HOURS, REQUEST_ID_TYPES, type ErrorCode } from "@cohent/protocol";
import type { RequestRecord, Store } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { baseStore, STORE_BASE } from "../../store/identity.js";

/**
 * Request ids (protocol REQUEST_ID_HEADER): a write sent again with the same id runs once, and every
 * retry gets the first answer, on any instance sharing the database.
 *
 * The id is recorded in the write's own transaction (the operation's first), right after the
 * repository's lock: the write and its record commit together, so an acknowledged write is never run
 * again, and a write that rolled back (nothing written) leaves no record, so its retry runs. A retry
 * that arrives while the first runs waits for the lock and then finds the record (on PostgreSQL too,
 * across instances: both take the repository's row lock first, so neither waits on the other's key
 * while holding the lock, and they cannot deadlock). The answer is stored once the operation has it
 * (after its transaction: a refusal written after the claim's transaction is part of it); a retry
 * that finds the record without it waits for it, up to WAIT_MS.
 */

/** How long a retry waits for the first request's answer before REQUEST_IN_FLIGHT. */
const WAIT_MS = 5_000;
/** A record this old without an answer lost it (its instance stopped between the commit and the answer). */
const LOST_MS = 60_000;
const RETENTION_MS = REQUEST_ID_RETENTION_HOURS * 3_600_000;

/** The agent operations that write: only these take a request id (a read runs again at no cost). */
export const WRITES: ReadonlySet<string> = new Set(REQUEST_ID_TYPES);

type Outcome =
  { ok: true; data: unknown } | { ok: false; error: { code: string; message: string; details?: unknown } };

/** Thrown inside the write's transaction when its id is there already: rolls its savepoint back. */
class Repeat extends Error {
  constructor(readonly found: RequestRecord) {
    super("request id already recorded");
  }
}

export const bodyHash = (body: unknown) => createHash("sha256").update(JSON.stringify(body)).digest("hex");

function replay(rec: RequestRecord): unknown {
  const o = JSON.parse(rec.outcome!) as Outcome;
  if (o.ok) return o.data;
  throw new CohentError(o.error.code as ErrorCode, o.error.message, o.error.details);
}

/** The first answer to `found`'s id, once it has one. */
async function firstAnswer(deps: Deps, found: RequestRecord, hash: string): Promise<unknown> {
  if (found.bodyHash !== hash) throw new CohentError("REQUEST_ID_REUSED");
  const deadline = Date.now() + WAIT_MS;
  let rec: RequestRecord | null = found;
  for (let delay = 10; rec && rec.outcome === null; delay = Math.min(delay * 2, 200)) {
    if (deps.clock().getTime() - rec.createdAt.getTime() > LOST_MS)
      throw new CohentError(
        "REQUEST_IN_FLIGHT",
        "The first request with this id took effect, but its answer was lost (its instance stopped); read the state (context) instead of sending it again.",
        { lost: true },
      );
    if (Date.now() >= deadline) throw new CohentError("REQUEST_IN_FLIGHT");
    await new Promise((r) => setTimeout(r, delay));
    rec = await deps.store.requests.get(found.tokenId, found.key);
  }
  // Expired between the two reads (a day old): nothing to answer with.
  if (!rec)
    throw new CohentError("REQUEST_IN_FLIGHT", "That request id expired; send the write with a new id.");
  return replay(rec);
}

/**
 * Runs `run` once for the caller's token and `key`: `run` gets deps whose store records the id in the
 * first transaction it opens. A retry gets the first answer (the same data, or the same error).
 */
export async function once(
  deps: Deps,
  caller: Caller,
  request: { key: string; body: unknown },
  run: (deps: Deps) => Promise<unknown>,
): Promise<unknown> {
  const tokenId = caller.token.id;
  const { key } = request;
  const hash = bodyHash(request.body);
  let recorded = false;
  const tx: Store["tx"] = (fn, opts) => {
    if (recorded) return deps.store.tx(fn, opts);
    return deps.store
      .tx(async (t) => {
        await t.journal.lock(caller.repo.id);
        const found = await t.requests.begin({ tokenId, key, bodyHash: hash, at: deps.clock() });
        if (found) throw new Repeat(found);
        const out = await fn(t);
        recorded = true;
        return out;
      }, opts)
      .catch((err: unknown) => {
        // Rolled back (this write failed, or it belonged to a batch that failed): no record was kept.
        recorded = false;
        throw err;
      });
  };
  const store = new Proxy(deps.store, {
    get: (target, k) =>
      k === "tx" ? tx : k === STORE_BASE ? baseStore(target) : Reflect.get(target, k, target),
  });
  let outcome: Outcome;
  try {
    outcome = { ok: true, data: await run({ ...deps, store }) };
  } catch (err) {
    if (err instanceof Repeat) return firstAnswer(deps, err.found, hash);
    if (!recorded) throw err;
    const e = err instanceof CohentError ? err : new CohentError("INTERNAL");
    outcome = { ok: false, error: { code: e.code, message: e.message, details: e.details } };
    answer(deps, caller, key, outcome);
    throw err;
  }
  // A write that opened no transaction recorded nothing: it runs again on a retry.
  if (recorded) answer(deps, caller, key, outcome);
  return outcome.data;
}

/**
 * Stores the first answer (as it is now: serialized at once), not waited for: the caller is answered
 * without another commit in its way, and a retry, which only follows a lost answer, waits for it
 * (firstAnswer). Its failure (the database gone meanwhile) leaves a retry REQUEST_IN_FLIGHT.
 */
function answer(deps: Deps, caller: Caller, key: string, outcome: Outcome): void {
  const json = JSON.stringify(outcome);
  // In the repository's next group commit (store/batch): with writes arriving, it shares their commit.
  deps.store
    .tx((t) => t.requests.answer(caller.token.id, key, json), { batch: caller.repo.id })
    .catch((err: unknown) => {
      deps.log.warn({ err: String(err), key }, "request id: the first answer was not stored");
    });
}

/** Deletes the request ids older than the retention: the sweeper calls it now and then. */
export const expireRequests = (deps: Deps) =>
  deps.store.requests.expire(new Date(deps.clock().getTime() - RETENTION_MS));
