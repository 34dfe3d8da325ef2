import type { Packet } from "@cohent/protocol";
import { noteEdit, restoreHeld } from "./files.js";

/**
 * A person asked from the Control Room (notice `restore-requested`) that
 * this checkout put back what one of its calls changed under a peer's
 * claim. Done here, as soon as the packet carrying the notice arrives (the
 * hook's next contact, or any command's), as `restore <path>` would: an
 * edit made since the catch is merged or kept aside, the writes noted as
 * this restore's own, so a peer's check after its call does not report
 * them. The outcome is appended to the notice's line, in the notice and in
 * the packet's text, which the model reads. The service is not told: the
 * model's next checkpoint or edit says the rest. Nothing happens without a
 * checkout (the backend's /mcp endpoint has no root, and no stash).
 */
export function restoreRequested(root: string, packet: Packet): void {
  if (!root) return;
  for (const n of packet.notices ?? []) {
    if (n.kind !== "restore-requested" || n.paths.length === 0) continue;
    const self = `restore-notice-${process.pid}`;
    noteEdit(root, self, n.paths, "start");
    const results = n.paths.map((p) => restoreHeld(root, p));
    noteEdit(root, self, [], "end");
    const text = `${n.text}\n[cohent] ${results.map((r) => r.message).join(" ")}`;
    packet.text = packet.text.includes(n.text)
      ? packet.text.replace(n.text, () => text)
      : `${text}\n${packet.text}`;
    n.text = text;
  }
}
