/**
 * What says a cohent.cjs serves the in-process API (loader.ts): build.mjs writes it into the file's
 * head, and OpenCode's plugin requires the file only when it reads it there (an older or foreign
 * cohent.cjs would run its CLI inside OpenCode), then sets it on globalThis for the length of the
 * require, which tells the loader to export `hook` and run nothing.
 */
export const IN_PROCESS_MARK = "cohent-in-process/1";
