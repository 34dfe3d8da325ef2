import { randomUUID } from "node:crypto";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";

// Only the Prisma CLI (migrate diff / dev / status) uses this file. The
// server applies the committed SQL itself (backend/src/store/migrate.ts).
process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/test";

// prisma/orm#27403: the schema engine cannot read columns of PostgreSQL's
// internal types (name, char, …); present them as text.
const INTERNAL_OIDS = new Set([18, 19, 22, 24, 28, 30, 194, 2205]);
type Queryable = { query: (...args: unknown[]) => Promise<unknown> };
function patchQuery(target: Queryable): void {
  const original = target.query.bind(target);
  target.query = async (...args: unknown[]) => {
    const result = (await original(...args)) as { fields?: { dataTypeID: number }[] };
    for (const field of result?.fields ?? []) if (INTERNAL_OIDS.has(field.dataTypeID)) field.dataTypeID = 25;
    return result;
  };
}
function patchedPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  patchQuery(pool as unknown as Queryable);
  pool.on("connect", (client) => patchQuery(client as unknown as Queryable));
  return pool;
}

// The built-in shadow database reuses the main one when given a URL.
class PatchedPg extends PrismaPg {
  constructor(private readonly url: string) {
    super(patchedPool(url));
  }
  override async connectToShadowDb() {
    const name = `prisma_shadow_${randomUUID().replace(/-/g, "")}`;
    const admin = new pg.Client({ connectionString: this.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const shadowUrl = new URL(this.url);
    shadowUrl.pathname = `/${name}`;
    // The shadow pool is ours: ended on dispose, or DROP DATABASE fails ("being accessed by other
    // users"), which the CLI reports only as "External error id#0".
    const adapter = await new PrismaPg(patchedPool(shadowUrl.toString()), {
      disposeExternalPool: true,
    }).connect();
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      const drop = new pg.Client({ connectionString: this.url });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await drop.end();
    };
    return adapter;
  }
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "./postgres",
  migrations: { path: "./postgres/migrations" },
  adapter: async () => new PatchedPg(process.env.DATABASE_URL!),
});
