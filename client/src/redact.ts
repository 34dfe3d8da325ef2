// The rules live in the protocol, once: the server redacts relayed peer text with them too.
export { redact, redactDeep } from "@cohent/protocol/redact";

/**
 * What the model reads names no absolute path of this machine: the
 * checkout's root becomes `.`, the home directory `~` (an error message of
 * the adapter may carry either, a stuck lock file for one).
 */
export function scrubPaths(text: string, root: string | null, home = process.env.HOME ?? ""): string {
  let out = text;
  if (root && root.length > 1) out = out.split(root).join(".");
  if (home && home.length > 1) out = out.split(home).join("~");
  return out;
}
