// Runs after `npm install` / `npm ci`: generates both Prisma clients (no database needed).
import { execFileSync } from "node:child_process";

const prisma = new URL("../node_modules/prisma/build/index.js", import.meta.url).pathname;
for (const provider of ["sqlite", "postgres"]) {
  execFileSync(process.execPath, [prisma, "generate", "--config", `prisma/${provider}.config.ts`], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
  });
}
