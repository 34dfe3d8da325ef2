import { PG_BASE_URL } from "./backend.js";

/** Integration suites run on SQLite always, and on PostgreSQL too when COHENT_TEST_DATABASE_URL is set. */
export const DATABASE_KINDS: ("sqlite" | "postgres")[] = PG_BASE_URL ? ["sqlite", "postgres"] : ["sqlite"];
