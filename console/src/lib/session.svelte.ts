import type { ConsoleMe, SignInMode } from "@cohent/protocol";
import { get } from "./api";

/** Who is signed in, and the CSRF token state-changing requests carry. */
export const session = $state({
  loaded: false,
  signedIn: false,
  mode: "local" as SignInMode,
  person: "",
  provider: "",
  csrfToken: "",
  error: "",
});

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
