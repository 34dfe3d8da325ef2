// The console wire's names, free of zod so that the Control Room's browser bundle can
// import them without the schemas (protocol/src/console.ts builds those from these).

/** What a person can tell a session from the Control Room. */
export const CONTROL_KINDS = ["pause", "cancel", "resume"] as const;
type ControlKind = (typeof CONTROL_KINDS)[number];

/** The session's control state after each command. */
export const CONTROL_STATE = {
  pause: "paused",
  cancel: "cancelled",
  resume: "active",
} as const satisfies Record<ControlKind, "active" | "paused" | "cancelled">;

/** The header a console state change carries its CSRF token in. */
export const CSRF_HEADER = "x-cohent-csrf";
/** The server-sent event the console stream emits when anything it shows changed. */
export const LIVE_EVENT = "change";
/**
 * The console's live stream. With `?repo=owner/name` it carries that repository's change log and
 * versions; without, only a summary version (the repository list's): never another page's events.
 */
export const LIVE_PATH = "/api/console/events";

/** The repository list's paging (GET /api/console/repos?q=&page=&limit=). */
export const REPO_PAGE = { defaultLimit: 50, maxLimit: 200, queryChars: 200 } as const;

/** RFC 8628 §6.1: no vowels (no words), no lookalikes. */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
