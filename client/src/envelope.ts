// The protocol's zod-free envelope builders, under the adapter's short names.
export type { Envelope } from "@cohent/protocol";
export { success as ok, fail, failFrom, withProtocolFlags } from "@cohent/protocol/envelope-build";
