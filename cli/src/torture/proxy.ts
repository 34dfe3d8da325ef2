import net from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that can stop answering: `stall()` stops reading from both sides
 * (the bytes wait in the kernel's buffers, as they would for a database process that hangs) while every
 * connection stays open and new ones are accepted and held; `resume()` lets everything through again,
 * in order; `drop()` cuts every connection and refuses new ones until `resume()`, as a restart would. The
 * machine's PostgreSQL is shared, so the torture never restarts it: these are its outages.
 */
export interface StallProxy {
  port: number;
  stall(): void;
  resume(): void;
  /** As a database restart looks from its clients: every connection cut, new ones cut at once, until `resume()`. */
  drop(): void;
  close(): Promise<void>;
}

export async function startStallProxy(target: { host: string; port: number }): Promise<StallProxy> {
  let stalled = false;
  let down = false;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    // Plain forwarding, no pipe(): a pipe resumes its source on drain, which would end a stall.
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => client.write(d));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    if (stalled) for (const s of pair) s.pause();
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    stall() {
      stalled = true;
      for (const pair of pairs) for (const s of pair) s.pause();
    },
    drop() {
      down = true;
      for (const pair of pairs) for (const s of pair) s.destroy();
    },
    resume() {
      stalled = false;
      down = false;
      for (const pair of pairs) for (const s of pair) s.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) for (const s of pair) s.destroy();
        server.close(() => resolve());
      }),
  };
}
