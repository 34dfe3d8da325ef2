import { createHash, randomBytes } from "node:crypto";

/**
 * Every durable id: a product prefix and 20 random hex characters; a
 * packet's and a checkpoint's have 11 hex characters of the time before them.
 */
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
  | "rra"
  | "wir";
/** Random bytes drawn 4 KiB at a time: one call to the system's generator per 409 ids instead of one each. */
const POOL_BYTES = 4090;
let pool = Buffer.alloc(0);
let used = POOL_BYTES;

/**
 * The rows written on most agent calls, keyed by their id: led by the time
 * (milliseconds, until the year 2527), each insert lands beside the last one
 * in the primary key's B-tree instead of on a random page, and a commit writes
 * fewer pages (SQLite checkpoint: ~20 % more per second, bench:load). The
 * random part keeps its 80 bits. Not decisions: their ids are in the packets'
 * text, where every character counts.
 */
const TIME_LED = new Set<IdPrefix>(["pkt", "chk"]);

export function newId(prefix: IdPrefix): string {
  if (used + 10 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  used += 10;
  const random = pool.toString("hex", used - 10, used);
  return TIME_LED.has(prefix)
    ? `${prefix}_${Date.now().toString(16).padStart(11, "0")}${random}`
    : `${prefix}_${random}`;
}

/** Every secret (agent tokens, cookies, device codes, login links): shown once, stored only as its hash. */
export function newSecret(prefix: "coh" | "cohs" | "cohl" | "cohd"): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
