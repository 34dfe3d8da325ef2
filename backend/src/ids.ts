import { createHash, randomBytes } from "node:crypto";

/** Every durable id: a product prefix and 20 hex characters. */
export type IdPrefix =
  | "wki"
  | "pkt"
  | "ses"
  | "tok"
  | "rep"
  | "dec"
  | "chk"
  | "cmd"
  | "gc"
  | "pai"
  | "lnk"
  | "cs"
  | "qw"
  | "ntc"
  | "rra";
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(10).toString("hex")}`;
}

/** Every secret (agent tokens, cookies, device codes, login links): shown once, stored only as its hash. */
export function newSecret(prefix: "coh" | "cohs" | "cohl" | "cohd"): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
