import { createHash, randomBytes } from "node:crypto";

/** Durable ids: a product prefix and 20 hex characters. */
export function newId(prefix: "wki" | "pkt" | "ses" | "tok" | "rep" | "dec" | "chk" | "cmd" | "gc"): string {
  return `${prefix}_${randomBytes(10).toString("hex")}`;
}

/** Agent tokens: shown once, stored only as their SHA-256. */
export function newToken(): string {
  return `coh_${randomBytes(32).toString("base64url")}`;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
