/**
 * Node built-ins that only some commands need, loaded on first use. esbuild
 * hoists every static `import … from "node:x"` to the top of the one-file
 * bundle, so a static import here would be paid by every hook process.
 * process.getBuiltinModule (Node ≥ 20.16), not createRequire: node:module
 * would load the ES module loader into every hook.
 */
const load = (id: string): unknown => process.getBuiltinModule(id);

export const crypto = () => load("node:crypto") as typeof import("node:crypto");
export const childProcess = () => load("node:child_process") as typeof import("node:child_process");
export const os = () => load("node:os") as typeof import("node:os");
export const http = () => load("node:http") as typeof import("node:http");
export const https = () => load("node:https") as typeof import("node:https");
export const util = () => load("node:util") as typeof import("node:util");
