import type { Notice, Packet } from "@cohent/protocol";
import type { SessionFile, SessionState } from "../state/runtime.js";

/**
 * What a packet's notices do on this side: they open the text the model is
 * shown once, change the session's local idea of its scope, and reach the
 * listeners a process registered (the adapter's restore of caught writes).
 */

/** The lines a packet's notices open its text with (empty without notices). */
export const noticeText = (notices: readonly Notice[] | undefined): string =>
  (notices ?? []).map((n) => n.text).join("\n");

/**
 * What a packet's notices change in the session's local idea of its scope:
 * a granted claim is now the scope (the paths waited for and what the
 * intent held by then); a lost claim's paths leave it, and the scope stops
 * being explicit so that the next edit of them claims again (and is refused
 * if a peer took them meanwhile).
 */
export function applyNotices(s: SessionFile, notices: readonly Notice[] | undefined): void {
  for (const n of notices ?? []) {
    if (n.kind === "scope-granted")
      s.set({ scope: [...n.paths], explicitScope: n.paths.length > 0, queued: undefined });
    else if (n.kind === "scope-lost") {
      const lost = new Set(n.paths);
      s.set({ scope: s.state.scope.filter((p) => !lost.has(p)), explicitScope: false });
    } else if (n.kind === "queue-left") s.set({ queued: undefined });
  }
}

/** What else a process does with a packet's notices: the adapter restores caught shell writes (held/restore-requested.ts). */
export type PacketListener = (root: string, packet: Packet) => void;
const listeners: PacketListener[] = [];

/** Registers a listener for every packet this process receives; the server's /mcp registers none. */
export function onPacket(listener: PacketListener): void {
  if (!listeners.includes(listener)) listeners.push(listener);
}

/** Every packet the adapter receives passes here: its notices change the local scope (and the listeners act). */
export function received(s: SessionFile, packet: Packet | null | undefined): void {
  if (!packet?.notices?.length) return;
  applyNotices(s, packet.notices);
  for (const listener of listeners) listener(s.root, packet);
}

/**
 * The packet to inject at the next PostToolUse. A packet not yet shown is
 * replaced, but its notices are told once and never again by the service,
 * so their lines carry over to open the new text.
 */
export function pendingOf(
  old: SessionState["pending"],
  packet: Packet,
): NonNullable<SessionState["pending"]> {
  const carried = old?.notices ?? "";
  const own = noticeText(packet.notices);
  const notices = [carried, own].filter(Boolean).join("\n");
  return {
    packetId: packet.id,
    text: carried ? `${carried}\n${packet.text}` : packet.text,
    ...(notices ? { notices } : {}),
  };
}

/**
 * Takes the notice lines of the pending packet, for a refusal to carry: the
 * rest of the packet stays pending for the next PostToolUse (the notices are
 * told once). Undefined when no notice is pending.
 */
export function takeNotices(s: SessionFile): string | undefined {
  const p = s.state.pending;
  if (!p?.notices) return undefined;
  const rest = p.text.startsWith(p.notices) ? p.text.slice(p.notices.length).trim() : p.text;
  s.set({ pending: rest ? { packetId: p.packetId, text: rest } : undefined });
  return p.notices;
}
