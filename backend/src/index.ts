export { createApp } from "./http/app.js";
export { startServer, type RunningServer, type ServerDeps } from "./server.js";
export { openDb, type Db } from "./store/db.js";
export { createStore, type Store, type Tx } from "./store/index.js";
export { migrate } from "./store/migrate.js";
export { resolve, type ResolverIntent, type Resolution } from "./core/resolver.js";
export { arbitrate } from "./core/arbitrate.js";
export { DEFAULT_LEASE, guardStatus, type LeaseConfig } from "./core/lease.js";
export { consoleConfigFromEnv, type ConsoleConfig } from "./config.js";
export { createLogger } from "./log.js";
import { metricsSeries } from "./operations/people/metrics.js";
import * as overview from "./operations/people/overview.js";
import * as signin from "./operations/people/signin.js";
/** The Control Room's operations under the one name the package has always exported them by. */
export const consoleOps = { ...signin, ...overview, metricsSeries };
export * as admin from "./operations/people/admin.js";
export * as operations from "./operations/agent/index.js";
export * as pairing from "./operations/people/pairing.js";
export * as recapOps from "./operations/people/recap.js";
