import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { judge, poll, schedstat, type Sample } from "../helpers/liveness.js";
import { serve, stopProcess } from "../helpers/serve.js";

/**
 * The hostile corpus's "/healthz within 100 ms throughout" (test/helpers/liveness.ts) must catch a
 * server that blocks its event loop, by computing or by a synchronous wait, and must not blame the
 * server for the machine's run-queue waits.
 */

const sample = (ms: number, waitMs: number, cpuMs: number): Sample => ({
  ms,
  waitMs,
  cpuMs,
  ok: true,
  during: "",
});

describe("judging /healthz answers", () => {
  it.each([
    // wall, run-queue wait, server CPU -> the server's own delay
    [20, 0, 2, 20],
    [300, 290, 5, 10], // starved: the machine's
    [300, 0, 0, 300], // a synchronous sleep: no CPU, no run-queue wait
    [300, 280, 250, 250], // computing while this process also waited: the CPU time stays the server's
    [300, 400, 10, 10], // waits of both threads overlap: never more than the whole answer
  ])("%i ms, %i ms waiting, %i ms on CPU: %i ms the server's", (ms, waitMs, cpuMs, own) => {
    const v = judge([sample(ms, Math.min(ms, waitMs), cpuMs)], 100);
    expect(v.maxOwn).toBe(own);
    expect(v.max).toBe(ms);
    expect(v.slow.length).toBe(ms > 100 ? 1 : 0);
  });
});

/** A /healthz server in its own process; after `after` ms it blocks its event loop once for `blockMs` (`how`: CPU time spinning, wall time sleeping). */
function blocker(
  how: "spin" | "sleep" | "none",
  blockMs: number,
  after = 300,
): Promise<{ url: string; child: ChildProcess }> {
  const code = `
    const http = require("node:http");
    const s = http.createServer((q, r) => r.end("ok")).listen(0, "127.0.0.1", () => process.stdout.write(s.address().port + "\\n"));
    setTimeout(() => {
      // Spinning: ${blockMs} ms of CPU (what an idle machine would take), however long the machine makes it.
      const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
      const until = cpu() + ${blockMs};
      if (${JSON.stringify(how)} === "spin") while (cpu() < until) {}
      if (${JSON.stringify(how)} === "sleep") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${blockMs});
    }, ${after});`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve({ url: `http://127.0.0.1:${out.trim()}/healthz`, child });
    });
    child.once("exit", (c) => reject(new Error(`exited ${c}`)));
  });
}

describe("polling /healthz", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill();
    child = undefined;
  });

  it.each(["spin", "sleep"] as const)("catches an event loop blocked for 400 ms (%s)", async (how) => {
    const b = await blocker(how, 400);
    child = b.child;
    const p = poll(b.url, b.child.pid!);
    await new Promise((r) => setTimeout(r, 300 + 400 * 4));
    const v = judge(await p.stop(), 100);
    console.log(
      `${how}: polled ${v.polled}, max ${v.max.toFixed(0)} ms, the server's ${v.maxOwn.toFixed(0)} ms`,
    );
    expect(v.failed).toBe(0);
    expect(v.maxOwn).toBeGreaterThan(300);
  });

  it("does not blame a server that never blocks", async () => {
    const b = await blocker("none", 0);
    child = b.child;
    const p = poll(b.url, b.child.pid!);
    await new Promise((r) => setTimeout(r, 1_000));
    const v = judge(await p.stop(), 100);
    console.log(
      `none: polled ${v.polled}, max ${v.max.toFixed(0)} ms, the server's ${v.maxOwn.toFixed(0)} ms`,
    );
    expect(v.polled).toBeGreaterThan(10);
    // The instrument's own check, not the server's speed: measured 4 ms for a loop that never blocks.
    expect(v.maxOwn).toBeLessThanOrEqual(100);
  });
});

describe("cohent serve", () => {
  // The Control Room's first load held the loop 60-80 ms in one turn (135 ms under load: the hostile corpus's /healthz);
  // the server loads it before it says it serves (http/ui.ts warmConsole). Its main thread's CPU time is what each
  // page costs, whatever else the machine runs.
  it("has loaded the Control Room before it serves: no first page costs the server more than 15 ms of CPU", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-warm-"));
    const s = await serve(`file:${path.join(dir, "cohent.db")}`);
    try {
      await new Promise((r) => setTimeout(r, 200));
      const costs: string[] = [];
      let most = 0;
      for (const page of ["/signin", "/", "/nowhere", "/%00"]) {
        const before = schedstat(s.child.pid!).cpu;
        const r = await fetch(s.url + page, { redirect: "manual" });
        await r.arrayBuffer();
        const ms = schedstat(s.child.pid!).cpu - before;
        most = Math.max(most, ms);
        costs.push(`${page} ${r.status} ${ms.toFixed(1)} ms`);
      }
      console.log(`first pages' CPU on the server's main thread: ${costs.join(", ")}`);
      expect(costs[0]).toMatch(/^\/signin 200 /);
      expect(most).toBeGreaterThan(0); // schedstat read (Linux)
      expect(most).toBeLessThanOrEqual(15);
    } finally {
      await stopProcess(s.child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
