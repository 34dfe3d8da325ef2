import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ConsoleConfig } from "./config.js";
import { DEFAULT_LEASE, type LeaseConfig } from "./core/lease.js";
import { createApp } from "./http/app.js";
import { attachEdges } from "./http/edges.js";
import { warmConsole } from "./http/ui.js";
import type { Deps } from "./operations/deps.js";
import type { Db } from "./store/db.js";
import { openStore } from "./store/index.js";
import { startSweeper, sweepInterval } from "./live/sweeper.js";
import { rateLimitsFromEnv, type RateLimits } from "./http/rate-limit.js";
import { Admission, admissionFromEnv, type AdmissionLimits } from "./http/admission.js";

/** Headers beyond this answer 431 HEADERS_TOO_LARGE; agents send a few hundred bytes. */
const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Connections the kernel holds while the event loop is busy (Node's default is 511; Linux caps it at
 * net.core.somaxconn, 4096 here). Past capacity they wait there for the admission's quick 503, not
 * for SYN cookies and resets. COHENT_LISTEN_BACKLOG overrides.
 */
const LISTEN_BACKLOG = Number(process.env.COHENT_LISTEN_BACKLOG) || 4096;

/** The server's dependencies, plus raw database access for tests and tools (operations never use it). */
export type ServerDeps = Deps & { db: Db; sweeper: ReturnType<typeof startSweeper> };

export interface RunningServer {
  url: string;
  port: number;
  deps: ServerDeps;
  close(): Promise<void>;
}

/** Applies pending migrations, opens the store and listens. Used by `cohent serve` and by the tests. */
export async function startServer(opts: {
  databaseUrl: string;
  port?: number;
  host?: string;
  log: Logger;
  clock?: () => Date;
  lease?: LeaseConfig;
  /** Sign-in and UI settings of the Control Room; default: from the environment. */
  console?: ConsoleConfig;
  /** Per-token and per-pairing rate limits; null turns them off. Default: from the environment (COHENT_RATE_LIMIT). */
  rateLimits?: RateLimits;
  /** How often the lease sweeper runs; default from the lease (COHENT_SWEEP_MS overrides). */
  sweepMs?: number;
  /** Past capacity, agent requests answered 503 OVERLOADED at once; null turns it off. Default: from the environment. */
  admission?: AdmissionLimits | null;
}): Promise<RunningServer> {
  const { db, store, applied } = await openStore(opts.databaseUrl, {
    walCheckpointer: true,
    onWalCheckpointerError: (err) =>
      opts.log.warn({ err: err.message }, "SQLite checkpoints fall back to the writes: the worker failed"),
  });
  if (applied.length) opts.log.info({ applied }, "migrations applied");
  const base: Deps = {
    store,
    clock: opts.clock ?? (() => new Date()),
    lease: opts.lease ?? DEFAULT_LEASE,
    log: opts.log,
  };
  const sweeper = startSweeper(base, opts.sweepMs ?? sweepInterval(base.lease.leaseMs));
  const deps: ServerDeps = { ...base, db, sweeper };
  const runtime = {
    limits: opts.rateLimits === undefined ? rateLimitsFromEnv() : opts.rateLimits,
    ping: () => store.ping(),
  };
  const limits = opts.admission === undefined ? admissionFromEnv() : opts.admission;
  const admission = limits ? new Admission(limits, opts.log, deps.clock) : null;
  const app = createApp(deps, opts.console, runtime).callback();
  const handler = admission ? admission.wrap(app) : app;
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
  // What Node answers before Koa, or would not answer: still an envelope each (http/edges).
  attachEdges(server, handler, deps.clock);
  // Longer than clients keep idle sockets, so the client always closes first
  // and never reuses a socket the server has just closed.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: opts.port ?? 0, host: opts.host ?? "127.0.0.1", backlog: LISTEN_BACKLOG }, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${opts.host ?? "127.0.0.1"}:${port}`;
  await warmConsole(opts.host ?? "127.0.0.1", port);
  return {
    url,
    port,
    deps,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      sweeper.stop();
      admission?.stop();
      await db.close();
    },
  };
}
