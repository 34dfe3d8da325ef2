export * from "./bounds.js";
export * from "./errors.js";
export * from "./paths.js";
export * from "./intent.js";
export * from "./requests.js";
export * from "./packets.js";
export * from "./responses.js";
export * from "./envelope.js";
export { protocolDoc } from "./doc.js";
