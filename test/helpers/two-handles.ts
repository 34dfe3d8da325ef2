import { createStore, migrate, openDb, type Db, type Store } from "@cohent/backend";
import { freshDatabaseUrl } from "./backend.js";

export interface TwoHandles {
  dbs: [Db, Db];
  stores: [Store, Store];
  close(): Promise<void>;
}

/**
 * Two handles on one fresh, migrated database, each with its own store: two
 * connections on SQLite (as the admin CLI's process is), two instances on
 * PostgreSQL. What one writes, the other must learn of.
 */
export async function openTwoHandles(kind: "sqlite" | "postgres"): Promise<TwoHandles> {
  const fresh = await freshDatabaseUrl(kind);
  await migrate(fresh.url);
  const dbs: [Db, Db] = [await openDb(fresh.url), await openDb(fresh.url)];
  return {
    dbs,
    stores: [createStore(dbs[0]), createStore(dbs[1])],
    close: async () => {
      for (const db of dbs) await db.close();
      await fresh.drop();
    },
  };
}
