import { sveltekit } from "@sveltejs/kit/vite";
import { defineConfig, type Plugin } from "vite";

/**
 * The server build gets a node:async_hooks without AsyncLocalStorage. SvelteKit and Svelte's
 * renderer import it lazily and, when it is missing, render as they do where it does not exist
 * (getRequestEvent is synchronous only; the Control Room never calls it). One
 * AsyncLocalStorage.run turns on promise hooks for the whole process on Node 20, so the agent
 * API in the same process ran 25-35 % fewer requests a second (a bare Koa endpoint: 13-16k
 * against 17-22k req/s) from the first page anyone opened. SvelteKit's own runtime is bundled
 * here for it (adapter-node's later bundling runs no plugin of this file).
 */
const STUB = "\0no-async-hooks";
const noAsyncLocalStorage: Plugin = {
  name: "cohent-no-async-local-storage",
  enforce: "pre",
  resolveId: (id) => (id === "node:async_hooks" || id === "async_hooks" ? STUB : null),
  load: (id) => (id === STUB ? "export {};" : null),
};

export default defineConfig({
  plugins: [noAsyncLocalStorage, sveltekit()],
  ssr: { noExternal: ["@sveltejs/kit"] },
  // SvelteKit's own writeBundle hook dominates the build; the timing report is noise here.
  build: { rolldownOptions: { checks: { pluginTimings: false } } },
  // `vite dev` proxies the API to a running `cohent serve`.
  server: { proxy: { "/api": "http://127.0.0.1:4317", "/auth": "http://127.0.0.1:4317" } },
});
