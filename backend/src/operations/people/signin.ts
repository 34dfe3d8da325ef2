import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { SignInMode } from "@cohent/protocol";
import { hashToken, newId, newSecret } from "../../ids.js";
import type { Deps } from "../deps.js";

/** The Control Room's sign-in: one-time login links and console sessions. The HTTP layer only parses and sets cookies. */

export const LOGIN_LINK_TTL_MS = 24 * 3_600_000;
export const CONSOLE_SESSION_TTL_MS = 7 * 24 * 3_600_000;

/** A one-time local admin sign-in secret (printed as a link by `cohent serve`). Only its hash is stored. */
export async function createLoginLink(deps: Deps): Promise<string> {
  const token = newSecret("cohl");
  const at = deps.clock();
  await deps.store.consoleAuth.addLoginLink({
    id: newId("lnk"),
    tokenHash: hashToken(token),
    at,
    expiresAt: new Date(at.getTime() + LOGIN_LINK_TTL_MS),
  });
  return token;
}

/** Consumes a login link: true once, then never again. */
export async function redeemLoginLink(deps: Deps, token: string): Promise<boolean> {
  return deps.store.consoleAuth.redeemLoginLink(hashToken(token), deps.clock());
}

export interface ConsoleIdentity {
  id: string;
  person: string;
  provider: SignInMode;
  csrfToken: string;
  githubToken: string | null;
}

/**
 * The person's GitHub access token is kept to re-check push rights, sealed
 * with a key derived from their session cookie: the database holds only the
 * cookie's hash, so a copy of the database cannot recover the token.
 */
function sealKey(cookie: string): Buffer {
  return Buffer.from(hkdfSync("sha256", cookie, "cohent", "github token at rest", 32));
}
export function sealGithubToken(token: string, cookie: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealKey(cookie), iv);
  const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}
export function openGithubToken(sealed: string | null, cookie: string): string | null {
  const [v, iv, tag, body] = sealed?.split(".") ?? [];
  if (v !== "v1" || !iv || !tag || !body) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealKey(cookie), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    return null;
  }
}

export async function createConsoleSession(
  deps: Deps,
  input: { person: string; provider: SignInMode; githubToken?: string },
): Promise<{ cookie: string; identity: ConsoleIdentity; expiresAt: Date }> {
  const cookie = newSecret("cohs");
  const at = deps.clock();
  const expiresAt = new Date(at.getTime() + CONSOLE_SESSION_TTL_MS);
  const identity: ConsoleIdentity = {
    id: newId("cs"),
    person: input.person,
    provider: input.provider,
    csrfToken: randomBytes(24).toString("base64url"),
    githubToken: input.githubToken ?? null,
  };
  await deps.store.consoleAuth.addSession({
    ...identity,
    tokenHash: hashToken(cookie),
    githubToken: input.githubToken ? sealGithubToken(input.githubToken, cookie) : null,
    at,
    expiresAt,
  });
  return { cookie, expiresAt, identity };
}

export async function findConsoleSession(deps: Deps, cookie: string): Promise<ConsoleIdentity | null> {
  const now = deps.clock();
  const row = await deps.store.consoleAuth.sessionByHash(hashToken(cookie));
  if (!row || row.expiresAt <= now) return null;
  if (now.getTime() - row.lastSeenAt.getTime() > 5 * 60_000)
    await deps.store.consoleAuth.touchSession(row.id, now);
  return {
    id: row.id,
    person: row.person,
    provider: row.provider as SignInMode,
    csrfToken: row.csrfToken,
    githubToken: openGithubToken(row.githubToken, cookie),
  };
}

export async function endConsoleSession(deps: Deps, id: string): Promise<void> {
  await deps.store.consoleAuth.endSession(id);
}
