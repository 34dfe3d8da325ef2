// The console wire's names, free of zod so that the Control Room's browser bundle can
// import them without the schemas (protocol/src/console.ts builds those from these).

/** What a person can tell a session from the Control Room. */
export const CONTROL_KINDS = ["pause", "cancel", "resume"] as const;
type ControlKind = (typeof CONTROL_KINDS)[number];

/** The session's control state after each command. */
export const CONTROL_STATE = { pause: "paused", cancel: "cancelled", resume: "active" } as const satisfies Record<
  ControlKind,
  "active" | "paused" | "cancelled"
>;

/** The header a console state change carries its CSRF token in. */
export const CSRF_HEADER = "x-cohent-csrf";
/** The server-sent event the console stream emits when anything it shows changed. */
export const LIVE_EVENT = "change";
/** The console's live stream. */
export const LIVE_PATH = "/api/console/events";

/** RFC 8628 §6.1: no vowels (no words), no lookalikes. */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
