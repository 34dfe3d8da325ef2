import { randomInt } from "node:crypto";
import {
  CohentError,
  PairingPoll,
  PairingStart,
  USER_CODE_ALPHABET,
  UserCode,
  type PairingIssued,
  type PairingStarted,
  type PairingStatus,
  type PairingView,
} from "@cohent/protocol";
import { hashToken, newId, newSecret } from "../../ids.js";
import type { PairingRow } from "../../store/index.js";
import type { Deps } from "../deps.js";
import { pairingText } from "../shared/free-text.js";
import { createAgentToken } from "./admin.js";

/**
 * Pairing, in the spirit of the OAuth device authorization grant (RFC 8628):
 * a CLI asks for a credential for one repository, a signed-in person
 * approves or denies it in the browser, and the CLI polls for the answer.
 * Requests expire, device codes are single-use, and a client that polls
 * faster than its interval is slowed down (its interval grows), not failed.
 */

export const PAIRING_TTL_MS = 10 * 60_000;
export const PAIRING_INTERVAL_S = 2;
const MAX_INTERVAL_S = 10;
/** Timers and network jitter: a poll this much early still counts as on time. */
const POLL_GRACE_MS = 500;
function newUserCode(): string {
  const chars = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

export async function startPairing(deps: Deps, input: unknown, baseUrl: string): Promise<PairingStarted> {
  const req = pairingText(PairingStart.parse(input));
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + PAIRING_TTL_MS);
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    const deviceCode = newSecret("cohd");
    const id = newId("pai");
    const row = {
      id,
      repoName: req.repo,
      machine: req.machine,
      user: req.user,
      client: req.client ?? null,
      userCode,
      interval: PAIRING_INTERVAL_S,
    };
    // A user code collision (unique index): draw again.
    if (
      !(await deps.store.pairings.create({
        ...row,
        deviceCodeHash: hashToken(deviceCode),
        createdAt: now,
        updatedAt: now,
        expiresAt,
      }))
    ) {
      if (attempt >= 4) throw new Error("no free pairing user code");
      continue;
    }
    const verificationUri = `${baseUrl.replace(/\/$/, "")}/pair?code=${userCode}`;
    return {
      pairingId: id,
      userCode,
      verificationUri,
      deviceCode,
      interval: row.interval,
      expiresAt: expiresAt.toISOString(),
    };
  }
}

/** The CLI's poll. Every outcome but success is a stable failure code, returned (not thrown) so that the poll time commits. */
export async function pollPairing(deps: Deps, input: unknown): Promise<PairingIssued> {
  const { deviceCode } = PairingPoll.parse(input);
  const outcome = await deps.store.tx(async (t): Promise<PairingIssued | CohentError> => {
    const now = deps.clock();
    const row = await t.pairings.byDeviceHash(hashToken(deviceCode));
    const fail = (...args: ConstructorParameters<typeof CohentError>) => new CohentError(...args);
    if (!row) return fail("PAIRING_EXPIRED", "No such pairing request; start a new one.");
    if (row.status === "issued")
      return fail("PAIRING_EXPIRED", "This pairing request was already used; start a new one.");
    if (row.status === "denied")
      return fail("PAIRING_DENIED", `${row.approvedBy ?? "A person"} denied this pairing request.`);
    if (now >= row.expiresAt)
      return fail(
        "PAIRING_EXPIRED",
        "The pairing request expired before anyone approved it; start a new one.",
      );

    const early =
      row.lastPolledAt !== null &&
      now.getTime() - row.lastPolledAt.getTime() < row.interval * 1000 - POLL_GRACE_MS;
    if (early) {
      const interval = Math.min(row.interval + 2, MAX_INTERVAL_S);
      await t.pairings.update(row.id, { interval, lastPolledAt: now });
      return fail("PAIRING_SLOW_DOWN", `Polling too fast; wait ${interval} s between polls.`, { interval });
    }
    if (row.status === "pending") {
      await t.pairings.update(row.id, { lastPolledAt: now });
      return fail("PAIRING_PENDING", undefined, {
        interval: row.interval,
        expiresAt: row.expiresAt.toISOString(),
      });
    }
    // Approved: issue the token once. The conditional update is the single-use guard under concurrent polls.
    if (!(await t.pairings.claimApproved(row.id, now)))
      return fail("PAIRING_EXPIRED", "This pairing request was already used; start a new one.");
    const repo = await t.repos.byName(row.repoName);
    if (!repo)
      return fail("PAIRING_EXPIRED", "The repository of this pairing request is gone; start a new one.");
    const issued = await createAgentToken(t, deps, {
      repo,
      person: row.person ?? row.user,
      client: row.client,
    });
    await t.pairings.update(row.id, { tokenId: issued.id });
    return { token: issued.token, repo: issued.repo, person: issued.person };
  });
  if (outcome instanceof CohentError) throw outcome;
  return outcome;
}

function view(row: PairingRow, now: Date, repoKnown: boolean): PairingView {
  const expired = row.status !== "issued" && row.status !== "denied" && now >= row.expiresAt;
  return {
    id: row.id,
    repo: row.repoName,
    repoKnown,
    machine: row.machine,
    user: row.user,
    client: row.client,
    userCode: row.userCode,
    status: expired ? "expired" : (row.status as PairingStatus),
    approvedBy: row.approvedBy,
    person: row.person,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
  };
}

export async function pairingByCode(deps: Deps, code: string): Promise<PairingView> {
  const userCode = UserCode.parse(code);
  const row = await deps.store.pairings.byUserCode(userCode);
  if (!row) throw new CohentError("NOT_FOUND", `No pairing request with code ${userCode}.`);
  return view(row, deps.clock(), !!(await deps.store.repos.byName(row.repoName)));
}

/** Pending requests that have not expired, newest first; optionally of one repository. */
export async function pendingPairings(deps: Deps, repoName?: string): Promise<PairingView[]> {
  const now = deps.clock();
  const rows = await deps.store.pairings.pending(now, repoName);
  const known = await deps.store.repos.known(rows.map((r) => r.repoName));
  return rows.map((r) => view(r, now, known.has(r.repoName)));
}

/**
 * A person's answer. Approval registers an unknown repository (the person
 * approving owner/name has already been allowed to by the caller) and
 * records whom the token will work for; the token itself is issued on the
 * CLI's next poll, so its secret is never stored.
 */
export async function decidePairing(
  deps: Deps,
  input: { userCode: string; approve: boolean; actor: string; person: string },
): Promise<PairingView> {
  const userCode = UserCode.parse(input.userCode);
  return deps.store.tx(async (t) => {
    const now = deps.clock();
    const row = await t.pairings.byUserCode(userCode);
    if (!row) throw new CohentError("NOT_FOUND", `No pairing request with code ${userCode}.`);
    if (now >= row.expiresAt && row.status === "pending") throw new CohentError("PAIRING_EXPIRED");
    if (row.status !== "pending")
      throw new CohentError("FORBIDDEN", `This pairing request is already ${row.status}.`);
    let repo = await t.repos.byName(row.repoName);
    if (input.approve && !repo)
      repo = await t.repos.create({ id: newId("rep"), name: row.repoName, createdAt: now });
    const updated = await t.pairings.update(row.id, {
      status: input.approve ? "approved" : "denied",
      approvedBy: input.actor,
      person: input.approve ? input.person : null,
      decidedAt: now,
      updatedAt: now,
    });
    return view(updated, now, !!repo);
  });
}
