// The human side of the wire: pairing (the CLI asks, a person answers in the
// browser) and the Control Room's JSON and live stream. Inputs the backend
// validates are zod schemas; what it answers is plain types, read by the
// console with `import type`. One module (@cohent/protocol/console), a file
// per page or concern behind it.

export * from "./console-constants.js";
export * from "./console-commands.js";
export * from "./console-access.js";
export * from "./console-enforcement.js";
export * from "./console-work.js";
export * from "./console-overview.js";
export * from "./console-repos.js";
export * from "./console-scopes.js";
export * from "./console-metrics.js";
export * from "./console-recap.js";
