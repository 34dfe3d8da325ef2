import type { ConsoleMe } from "@cohent/protocol";
import { get } from "./api";
import { session } from "./session-state.svelte";

/** The session state lives in session-state.svelte.ts, which api.ts reads too (no import cycle); this loads it. */
export { session };

export async function loadSession(): Promise<void> {
  try {
    const me = await get<ConsoleMe>("/api/console/me");
    session.signedIn = me.signedIn;
    session.mode = me.mode;
    session.person = me.signedIn ? me.person : "";
    session.provider = me.signedIn ? me.provider : "";
    session.csrfToken = me.signedIn ? me.csrfToken : "";
    session.error = "";
  } catch {
    session.error = "The Cohent server cannot be reached. Is `cohent serve` running?";
  } finally {
    session.loaded = true;
  }
}
