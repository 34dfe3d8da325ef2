import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

// The CLI falls back to a native engine download when DATABASE_URL is unset.
process.env.DATABASE_URL ??= "file:./.data/cohent-dev.sqlite";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "./sqlite",
  migrations: { path: "./sqlite/migrations" },
  adapter: async () => new PrismaBetterSQLite3({ url: process.env.DATABASE_URL! }),
});
