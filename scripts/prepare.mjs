// Runs after `npm install` / `npm ci`: generates both Prisma clients (no database needed).
import { execFileSync } from "node:child_process";

const prisma = new URL("../node_modules/prisma/build/index.js", import.meta.url).pathname;
for (const provider of ["sqlite", "postgres"]) {
  execFileSync(process.execPath, [prisma, "generate", "--config", `prisma/${provider}.config.ts`], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
  });
}

// The Control Room: build the SvelteKit console (adapter-node) that `cohent serve` mounts on its own port.
// `svelte-kit sync` runs first so a fresh clone has the generated tsconfig it extends.
if (!process.env.COHENT_SKIP_CONSOLE_BUILD) {
  const consoleDir = new URL("../console/", import.meta.url).pathname;
  const kit = new URL("../node_modules/@sveltejs/kit/svelte-kit.js", import.meta.url).pathname;
  const vite = new URL("../node_modules/vite/bin/vite.js", import.meta.url).pathname;
  execFileSync(process.execPath, [kit, "sync"], { cwd: consoleDir, stdio: ["ignore", "ignore", "inherit"] });
  execFileSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: consoleDir,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
