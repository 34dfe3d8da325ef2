import { createRequire } from "node:module";

/**
 * Node built-ins that only some commands need, loaded on first use. esbuild
 * hoists every static `import … from "node:x"` to the top of the one-file
 * bundle, so a static import here would be paid by every hook process.
 */
const load = createRequire(import.meta.url);

export const crypto = () => load("node:crypto") as typeof import("node:crypto");
export const childProcess = () => load("node:child_process") as typeof import("node:child_process");
export const os = () => load("node:os") as typeof import("node:os");
export const http = () => load("node:http") as typeof import("node:http");
export const https = () => load("node:https") as typeof import("node:https");
