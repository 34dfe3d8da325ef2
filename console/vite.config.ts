import { sveltekit } from "@sveltejs/kit/vite";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [sveltekit()],
  // SvelteKit's own writeBundle hook dominates the build; the timing report is noise here.
  build: { rolldownOptions: { checks: { pluginTimings: false } } },
  // `vite dev` proxies the API to a running `cohent serve`.
  server: { proxy: { "/api": "http://127.0.0.1:4317", "/auth": "http://127.0.0.1:4317" } },
});
