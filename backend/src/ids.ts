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
/** Random bytes drawn 4 KiB at a time: one call to the system's generator per 409 ids instead of one each. */
const POOL_BYTES = 4090;
let pool = Buffer.alloc(0);
let used = POOL_BYTES;

export function newId(prefix: IdPrefix): string {
  if (used + 10 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  used += 10;
  return `${prefix}_${pool.toString("hex", used - 10, used)}`;
}

/** Every secret (agent tokens, cookies, device codes, login links): shown once, stored only as its hash. */
export function newSecret(prefix: "coh" | "cohs" | "cohl" | "cohd"): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
