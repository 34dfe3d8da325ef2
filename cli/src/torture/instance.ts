/**
 * One server instance of a torture that starts its own (`cohent torture --instance <spec>`): the same
 * startServer `cohent serve` runs, with the run's lease (short, so that an agent frozen past it is
 * seconds, not ten minutes) and this instance's clock skew (its clock runs skewMs ahead of the
 * machine's). It logs to stderr, which the torture writes to the instance's log file.
 */
export interface InstanceSpec {
  databaseUrl: string;
  port: number;
  silentMs: number;
  leaseMs: number;
  skewMs: number;
}

export async function serveInstance(spec: InstanceSpec): Promise<void> {
  const { createLogger, startServer } = await import("@cohent/backend");
  const log = createLogger(process.env.COHENT_LOG_LEVEL ?? "info");
  const server = await startServer({
    databaseUrl: spec.databaseUrl,
    port: spec.port,
    host: "127.0.0.1",
    log,
    lease: { silentMs: spec.silentMs, leaseMs: spec.leaseMs },
    clock: () => new Date(Date.now() + spec.skewMs),
  });
  process.stderr.write(`cohent serving on ${server.url} (clock skew ${spec.skewMs} ms)\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
