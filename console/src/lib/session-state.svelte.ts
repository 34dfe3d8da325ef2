import type { SignInMode } from "@cohent/protocol";

/**
 * Who is signed in, and the CSRF token state-changing requests carry. Its own
 * module so that api.ts (which reads the token and clears `signedIn` on
 * UNAUTHENTICATED) and session.svelte.ts (which loads it through api.ts) both
 * import it without importing each other.
 */
export const session = $state({
  loaded: false,
  signedIn: false,
  mode: "local" as SignInMode,
  person: "",
  provider: "",
  csrfToken: "",
  error: "",
});
