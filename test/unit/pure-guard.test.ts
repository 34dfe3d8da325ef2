import { execFileSync, spawn } from "node:child_process";
import net from "node:net";
import { describe, expect, it } from "vitest";

/**
 * The unit project's guard (test/helpers/pure.ts, vitest.config.ts): a unit test that starts a process
 * or opens a socket fails, naming the layer it belongs to. Without the guard these calls succeed.
 */
describe("the unit layer stays pure", () => {
  const layer = /in a unit test: this file belongs to the integration project/;

  it("refuses a child process, by either import", () => {
    expect(() => spawn(process.execPath, ["-e", "0"])).toThrow(layer);
    expect(() => execFileSync(process.execPath, ["-e", "0"])).toThrow(layer);
  });

  it("refuses a listening server and a connection", async () => {
    expect(() => net.createServer().listen(0, "127.0.0.1")).toThrow(layer);
    expect(() => net.connect(9, "127.0.0.1")).toThrow(layer);
    const refused = await fetch("http://127.0.0.1:65535/").then(
      () => null,
      (e: Error) => e.cause as Error,
    );
    expect(refused?.message).toMatch(layer);
  });
});
