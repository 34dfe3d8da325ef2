/** Who is signed in, and the CSRF token state-changing requests carry. */
export const session = $state({
  loaded: false,
  signedIn: false,
  mode: "local" as "local" | "github",
  person: "",
  provider: "",
  csrfToken: "",
  error: "",
});

export async function loadSession(): Promise<void> {
  try {
    const res = await fetch("/api/console/me");
    const body = await res.json();
    const d = body.data;
    session.signedIn = !!d.signedIn;
    session.mode = d.mode;
    session.person = d.person ?? "";
    session.provider = d.provider ?? "";
    session.csrfToken = d.csrfToken ?? "";
    session.error = "";
  } catch {
    session.error = "The Cohent server cannot be reached. Is `cohent serve` running?";
  } finally {
    session.loaded = true;
  }
}
