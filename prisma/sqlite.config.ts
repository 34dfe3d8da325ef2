import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

// The CLI falls back to a native engine download when DATABASE_URL is unset.
process.env.DATABASE_URL ??= "file:./.data/cohent-dev.sqlite";

// better-sqlite3's prepare() takes one statement, but the schema engine sends
// whole migration scripts through executeRaw when it replays migrations
// into the shadow database: route parameter-free ones to executeScript.
class ScriptingSQLite3 extends PrismaBetterSQLite3 {
  override async connect() {
    return scripting(await super.connect());
  }
  override async connectToShadowDb() {
    return scripting(await super.connectToShadowDb());
  }
}
type Adapter = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;
function scripting(adapter: Adapter): Adapter {
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeRaw = async (query) => {
    if (query.args.length === 0) {
      await adapter.executeScript(query.sql);
      return 0;
    }
    return executeRaw(query);
  };
  return adapter;
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "./sqlite",
  migrations: { path: "./sqlite/migrations" },
  adapter: async () => new ScriptingSQLite3({ url: process.env.DATABASE_URL! }),
});
