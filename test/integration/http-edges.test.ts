import net from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
import zlib from "node:zlib";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDS } from "@cohent/protocol";
import { consoleOps } from "@cohent/backend";
import { startBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { serve, stopProcess } from "../helpers/serve.js";
import { ConsoleClient } from "../console/helpers.js";

/**
 * The HTTP edges, against a real `cohent serve` process, as raw bytes on a
 * socket: compressed bodies (decoded within the body limit, or 415), every
 * method (CONNECT, Upgrade, unusual and unparseable ones, OPTIONS), every
 * Expect value. Each answer is a v1 envelope of application/json with its
 * exact status and code, the connection closes cleanly, and the process
 * lives on.
 */

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The 1xx answers seen before the final one. */
  interim: number[];
  /** How the server left the connection: a clean end, a reset, or still open when we stopped waiting. */
  closed: "end" | "reset" | "open";
}

/** Parses one HTTP/1.1 response off `buf`: null while incomplete. */
function parseResponse(
  buf: Buffer,
): { status: number; headers: Record<string, string>; body: Buffer; rest: Buffer } | null {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1))
    headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
  let at = end + 4;
  if (status < 200) return { status, headers, body: Buffer.alloc(0), rest: buf.subarray(at) };
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = buf.indexOf("\r\n", at);
      if (eol < 0) return null;
      const size = parseInt(buf.subarray(at, eol).toString("latin1"), 16);
      if (buf.length < eol + 2 + size + 2) return null;
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
      if (size === 0) return { status, headers, body: Buffer.concat(parts), rest: buf.subarray(at) };
    }
  }
  const length = Number(headers["content-length"] ?? 0);
  if (buf.length < at + length) return null;
  return { status, headers, body: buf.subarray(at, at + length), rest: buf.subarray(at + length) };
}

/**
 * One exchange on its own connection: the head, then the body (at once, or
 * only after a 100 Continue when `awaitContinue`). Resolves with the final
 * answer and how the server left the connection (it is given 3 s to close).
 */
function exchange(
  port: number,
  head: string,
  body?: Buffer,
  opts: { awaitContinue?: boolean; keepAlive?: boolean; timeoutMs?: number } = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let buf: Buffer = Buffer.alloc(0);
    const interim: number[] = [];
    let final: Omit<Answer, "interim" | "closed"> | null = null;
    let closed: Answer["closed"] = "open";
    let pending = body && body.length ? body : null;
    let settled = false;
    const sendBody = () => {
      if (pending) socket.write(pending);
      pending = null;
    };
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...(final ?? { status: 0, headers: {}, body: null }), interim, closed });
    };
    let timer = setTimeout(done, opts.timeoutMs ?? 10_000);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (!final) {
        const r = parseResponse(buf);
        if (!r) return;
        buf = r.rest;
        if (r.status < 200) {
          interim.push(r.status);
          if (r.status === 100) sendBody();
          continue;
        }
        let json: unknown = null;
        try {
          json = JSON.parse(r.body.toString("utf8"));
        } catch {
          /* not JSON */
        }
        final = { status: r.status, headers: r.headers, body: json };
        if (opts.keepAlive) return done();
        clearTimeout(timer);
        timer = setTimeout(done, 3_000);
      }
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ECONNRESET" || e.code === "EPIPE") closed = "reset";
    });
    socket.on("end", () => {
      if (closed === "open") closed = "end";
    });
    socket.on("close", done);
    socket.write(head);
    if (!opts.awaitContinue) sendBody();
  });
}

const codeOf = (a: Answer) =>
  a.body?.ok === true ? "ok" : (a.body?.error?.code ?? `no envelope (${a.status})`);

/** A full envelope answer: status, code, JSON content type, version 1; closed cleanly unless kept alive. */
function expectEnvelope(a: Answer, status: number, code: string, keepAlive = false) {
  expect([a.status, codeOf(a)], JSON.stringify(a.body)?.slice(0, 300)).toEqual([status, code]);
  expect(a.headers["content-type"]).toMatch(/^application\/json/);
  expect(a.body.version).toBe(1);
  if (!keepAlive) expect(a.closed).toBe("end");
}

/** Resident memory of a process (Linux), in bytes: now, and at its peak since the last resetPeak. */
const rss = (pid: number, field: "VmRSS" | "VmHWM") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, "5");

/** `bytes` of zeros compressed by `make`, without holding them: a bomb. */
async function bomb(
  make: () => zlib.BrotliCompress | zlib.Gzip | zlib.Deflate,
  bytes: number,
): Promise<Buffer> {
  const z = make();
  const out: Buffer[] = [];
  z.on("data", (c: Buffer) => out.push(c));
  const zero = Buffer.alloc(1 << 20);
  for (let left = bytes; left > 0; left -= zero.length)
    if (!z.write(left >= zero.length ? zero : zero.subarray(0, left)))
      await new Promise((r) => z.once("drain", r));
  await new Promise((r) => (z.once("end", r), z.end()));
  return Buffer.concat(out);
}

/** 1 GiB of zeros as br (809 bytes, a 16 MiB window), made once for both database kinds. */
const brotliBomb = bomb(
  () =>
    zlib.createBrotliCompress({
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 },
    }),
  2 ** 30,
);

interface Case {
  /** The test it belongs to: one property, checked over its table of cases. */
  group: string;
  name: string;
  run: () => Promise<Answer>;
  status: number;
  code: string;
  allow?: string;
  keepAlive?: boolean;
  /** 1xx answers the exchange must (not) see. */
  interim?: number[];
}

describe.each(DATABASE_KINDS)("every request gets an envelope (%s)", (kind) => {
  let proc: { url: string; child: ChildProcess };
  let port = 0;
  let token = "";
  let drop: () => Promise<void>;
  const browser = { cookie: "", csrf: "" };
  beforeAll(async () => {
    const setup = await startBackend({ kind });
    await setup.addRepo("acme/edges");
    token = await setup.issueToken("acme/edges", "edgar");
    const link = await consoleOps.createLoginLink(setup.deps);
    const url = setup.deps.db.url;
    drop = async () => {
      const again = await startBackend({ databaseUrl: url });
      await again.stop();
    };
    await setup.close();
    proc = await serve(url, { COHENT_RATE_LIMIT: "off" });
    port = Number(new URL(proc.url).port);
    const person = new ConsoleClient(proc.url);
    await person.signInWith(`/auth/local?token=${link}`);
    Object.assign(browser, { cookie: person.cookieHeader(), csrf: person.csrf });
    expect(browser.csrf).not.toBe("");
  }, 120_000);
  afterAll(async () => {
    if (proc) await stopProcess(proc.child);
    if (kind === "postgres") await drop?.();
  });

  const agentHead = (headers: Record<string, string | number> = {}, line = "POST /api/agent", auth = true) =>
    [
      `${line} HTTP/1.1`,
      "host: 127.0.0.1",
      ...(auth ? [`authorization: Bearer ${token}`, "x-cohent-session: edges"] : []),
      ...Object.entries({ connection: "close", ...headers }).map(([k, v]) => `${k}: ${v}`),
      "",
      "",
    ].join("\r\n");
  /** POST `body` to an agent, console or pairing route, with `encoding` (and its own content-length). */
  const postTo = (
    route: "agent" | "console" | "pairing",
    body: Buffer,
    headers: Record<string, string | number> = {},
    opts: Parameters<typeof exchange>[3] = {},
  ) => {
    const common = { "content-type": "application/json", "content-length": body.length, ...headers };
    const head =
      route === "agent"
        ? agentHead(common)
        : route === "console"
          ? agentHead(
              { ...common, cookie: browser.cookie, "x-cohent-csrf": browser.csrf },
              "POST /api/console/repos/acme/edges/goal",
              false,
            )
          : agentHead(common, "POST /api/pairing/token", false);
    return exchange(port, head, body, opts);
  };
  /**
   * One test per group: every case of it answered as stated (printed, case by case), and
   * afterwards the process alive and /healthz answering.
   */
  const tables = (prefix: string, cases: Case[]) => {
    const groups = new Map<string, Case[]>();
    for (const c of cases) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
    it.each([...groups])(`${prefix}: %s`, { timeout: 60_000 }, async (_group, table) => {
      const wrong: string[] = [];
      const lines: string[] = [];
      for (const c of table) {
        const a = await c.run();
        const got = `${a.status} ${codeOf(a)}`;
        const problems = [
          got !== `${c.status} ${c.code}` && `answered ${got}`,
          !/^application\/json/.test(a.headers["content-type"] ?? "") &&
            `content-type ${a.headers["content-type"]}`,
          a.body?.version !== 1 && "no v1 envelope",
          !c.keepAlive && a.closed !== "end" && `connection ${a.closed}`,
          c.allow !== undefined && a.headers.allow !== c.allow && `Allow ${JSON.stringify(a.headers.allow)}`,
          c.allow &&
            c.code === "ok" &&
            JSON.stringify(a.body?.data?.allow) !== JSON.stringify(c.allow.split(", ")) &&
            `data.allow ${JSON.stringify(a.body?.data?.allow)}`,
          c.interim &&
            JSON.stringify(a.interim) !== JSON.stringify(c.interim) &&
            `interim ${JSON.stringify(a.interim)}`,
        ].filter(Boolean);
        lines.push(
          `  ${problems.length ? "FAIL" : "ok  "} ${c.name}: ${got}${problems.length ? ` (${problems.join("; ")})` : ""}`,
        );
        if (problems.length) wrong.push(`${c.name}: want ${c.status} ${c.code}; ${problems.join("; ")}`);
      }
      console.log(`${prefix} (${kind}): ${_group}\n${lines.join("\n")}`);
      expect(proc.child.exitCode).toBeNull();
      expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
      expect(wrong).toEqual([]);
    });
  };

  const STATUS = Buffer.from(JSON.stringify({ type: "status" }));
  const GOAL = Buffer.from(JSON.stringify({ goal: "ship the edges" }));
  const POLL = Buffer.from(JSON.stringify({ deviceCode: "dc_unknown" }));
  const bodies = { agent: STATUS, console: GOAL, pairing: POLL };
  /** What each route answers to its body sent plain: the compressed forms must answer the same. */
  const plain = {
    agent: [200, "ok"],
    console: [200, "ok"],
    pairing: [410, "PAIRING_EXPIRED"],
  } as const;
  const encoders: Record<string, (b: Buffer) => Buffer> = {
    gzip: (b) => zlib.gzipSync(b),
    "x-gzip": (b) => zlib.gzipSync(b),
    GZip: (b) => zlib.gzipSync(b),
    deflate: (b) => zlib.deflateSync(b),
    identity: (b) => b,
    " gzip ": (b) => zlib.gzipSync(b),
  };

  const compressed: Case[] = [];
  for (const route of ["agent", "console", "pairing"] as const) {
    for (const [encoding, encode] of Object.entries(encoders))
      compressed.push({
        group: `${route} route: gzip (x-gzip, any case) and deflate bodies decode to what the plain body answers`,
        name: `${route}: ${JSON.stringify(encoding)} decodes`,
        run: () => postTo(route, encode(bodies[route]), { "content-encoding": encoding }),
        status: plain[route][0],
        code: plain[route][1],
      });
    for (const [encoding, bytes] of [
      ["gzip", Buffer.from(JSON.stringify({ type: "status" }))],
      ["gzip", zlib.gzipSync(bodies[route]).subarray(0, 12)],
      ["deflate", Buffer.from("not deflate at all")],
      ["deflate", zlib.deflateRawSync(bodies[route])],
      ["gzip", Buffer.alloc(0)],
    ] as const)
      compressed.push({
        group: `${route} route: corrupt, truncated or raw compressed data is 400 INVALID_ENCODING`,
        name: `${route}: corrupt ${encoding} (${bytes.subarray(0, 4).toString("hex")}…) is refused`,
        run: () => postTo(route, bytes, { "content-encoding": encoding }),
        status: 400,
        code: "INVALID_ENCODING",
      });
    for (const [encoding, encode] of [
      ["br", zlib.brotliCompressSync],
      ["compress", zlib.gzipSync],
      ["zstd", zlib.gzipSync],
      ["x-foo", zlib.gzipSync],
      ["gzip, gzip", (b: Buffer) => zlib.gzipSync(zlib.gzipSync(b))],
      ["deflate, gzip", (b: Buffer) => zlib.gzipSync(zlib.deflateSync(b))],
      ["*", zlib.gzipSync],
    ] as const)
      compressed.push({
        group: `${route} route: br, unknown codings and stacks of two are 415 UNSUPPORTED_ENCODING`,
        name: `${route}: ${JSON.stringify(encoding)} is not accepted`,
        run: () => postTo(route, encode(bodies[route]), { "content-encoding": encoding }),
        status: 415,
        code: "UNSUPPORTED_ENCODING",
      });
  }
  // The limit is on the decoded bytes: padding that compresses to nothing still counts.
  const padded = (n: number) => Buffer.from(`{"type":"status"}${" ".repeat(n - '{"type":"status"}'.length)}`);
  compressed.push(
    {
      group: "the body limit bounds the bytes sent and the bytes decoded",
      name: "agent: gzip of a body at the limit decodes",
      run: () => postTo("agent", zlib.gzipSync(padded(BOUNDS.bodyBytes)), { "content-encoding": "gzip" }),
      status: 200,
      code: "ok",
    },
    {
      group: "the body limit bounds the bytes sent and the bytes decoded",
      name: "agent: gzip of a body one byte over the limit is too large",
      run: () => postTo("agent", zlib.gzipSync(padded(BOUNDS.bodyBytes + 1)), { "content-encoding": "gzip" }),
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
    },
    {
      // 4,000 empty gzip members before the body: 80 KB sent, 17 bytes decoded.
      group: "the body limit bounds the bytes sent and the bytes decoded",
      name: "agent: gzip with more bytes sent than the limit is too large, whatever it decodes to",
      run: () =>
        postTo(
          "agent",
          Buffer.concat([
            ...Array.from({ length: 4_000 }, () => zlib.gzipSync(Buffer.alloc(0))),
            zlib.gzipSync(STATUS),
          ]),
          { "content-encoding": "gzip" },
        ),
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
    },
  );

  tables("compressed bodies", compressed);

  it("a body refused unread gets its answer before the close, never a reset: 5 MB bodies, 16 at once", async () => {
    // Closed with the body unread, the server's socket reset the client's, and a reset can discard the
    // answer unread (CI: "expected PAYLOAD_TOO_LARGE, got no answer"). The lingering close ends cleanly.
    const body = Buffer.from(JSON.stringify({ type: "publish", prompt: "p".repeat(5_000_000) }));
    const answers = await Promise.all(Array.from({ length: 16 }, () => postTo("agent", body)));
    expect(answers.map((a) => `${a.status} ${codeOf(a)} ${a.closed}`)).toEqual(
      answers.map(() => "413 PAYLOAD_TOO_LARGE end"),
    );
  });

  it("an unaccepted encoding names the accepted ones (415 with Accept-Encoding)", async () => {
    const a = await postTo("agent", STATUS, { "content-encoding": "zstd" });
    expectEnvelope(a, 415, "UNSUPPORTED_ENCODING");
    expect(a.headers["accept-encoding"]).toBe("gzip, deflate");
    expect(a.body.error.details).toEqual({ accepted: ["gzip", "deflate", "identity"] });
  });

  it(
    "zip bombs are refused at the limit without inflating them: gzip and deflate of 50 MB (413), br of 1 GB (415)",
    { timeout: 120_000 },
    async () => {
      const bombs = {
        gzip: [await bomb(() => zlib.createGzip({ level: 9 }), 50 * 2 ** 20), 413, "PAYLOAD_TOO_LARGE"],
        deflate: [await bomb(() => zlib.createDeflate({ level: 9 }), 50 * 2 ** 20), 413, "PAYLOAD_TOO_LARGE"],
        br: [await brotliBomb, 415, "UNSUPPORTED_ENCODING"],
      } as const;
      const pid = proc.child.pid!;
      resetPeak(pid);
      const before = rss(pid, "VmRSS");
      const lines: string[] = [];
      for (const [encoding, [bytes, status, code]] of Object.entries(bombs)) {
        expect(bytes.length).toBeLessThan(BOUNDS.bodyBytes);
        const t = performance.now();
        // Several at once: each must stop at the limit, not one at a time.
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => postTo("agent", bytes, { "content-encoding": encoding })),
        );
        const ms = performance.now() - t;
        for (const a of answers) expectEnvelope(a, status, code);
        lines.push(`${encoding} ${bytes.length} B x8: ${ms.toFixed(0)} ms`);
      }
      const grown = rss(pid, "VmHWM") - before;
      console.log(
        `zip bombs (${kind}): ${lines.join("; ")}; server peak RSS +${(grown / 2 ** 20).toFixed(1)} MB`,
      );
      // Inflating any one of them whole would take 50 MB to 1 GB.
      expect(grown).toBeLessThan(16 * 2 ** 20);
    },
  );

  const line = (method: string, path: string, extra = "") =>
    `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${extra}\r\n`;
  const methods: Case[] = [
    {
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: "CONNECT to an authority",
      run: () => exchange(port, "CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1:22\r\n\r\n"),
      status: 405,
      code: "METHOD_NOT_ALLOWED",
      allow: "GET, HEAD, POST, OPTIONS",
    },
    {
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: "CONNECT to a path, with bytes after the head",
      run: () =>
        exchange(port, "CONNECT /api/agent HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\nSSH-2.0-OpenSSH_9.6\r\n"),
      status: 405,
      code: "METHOD_NOT_ALLOWED",
      allow: "GET, HEAD, POST, OPTIONS",
    },
  ];
  // Routes and what each allows.
  const routes: [path: string, allow: string][] = [
    ["/api/agent", "POST, GET, HEAD"],
    ["/api/agent/session", "GET, HEAD"],
    ["/healthz", "HEAD, GET"],
    ["/api/pairing", "POST"],
    ["/api/console/repos", "HEAD, GET"],
    ["/signin", "GET, HEAD"],
  ];
  for (const [path, allow] of routes) {
    for (const method of [
      "PROPFIND",
      "SEARCH",
      "QUERY",
      "TRACE",
      "PURGE",
      "M-SEARCH",
      "PUT",
      "DELETE",
      "PATCH",
    ])
      methods.push({
        group: `methods on ${path}: 405 with Allow, OPTIONS 200 with Allow and the list`,
        name: `${method} ${path}`,
        run: () => exchange(port, line(method, path)),
        status: 405,
        code: "METHOD_NOT_ALLOWED",
        allow,
      });
    methods.push({
      group: `methods on ${path}: 405 with Allow, OPTIONS 200 with Allow and the list`,
      name: `OPTIONS ${path}`,
      run: () => exchange(port, line("OPTIONS", path)),
      status: 200,
      code: "ok",
      allow,
    });
  }
  methods.push(
    {
      group: "methods on an unknown route (404 whatever the method) and OPTIONS *",
      name: "PROPFIND on an unknown route",
      run: () => exchange(port, line("PROPFIND", "/api/nope")),
      status: 404,
      code: "NOT_FOUND",
    },
    {
      group: "methods on an unknown route (404 whatever the method) and OPTIONS *",
      name: "OPTIONS on an unknown route",
      run: () => exchange(port, line("OPTIONS", "/api/nope")),
      status: 404,
      code: "NOT_FOUND",
    },
    {
      group: "methods on an unknown route (404 whatever the method) and OPTIONS *",
      name: "OPTIONS *",
      run: () => exchange(port, line("OPTIONS", "*")),
      status: 200,
      code: "ok",
      allow: "GET, HEAD, POST, OPTIONS",
    },
  );
  for (const method of ["get", "Post", "FOO", "BREW", "G@T", "X".repeat(40)])
    methods.push({
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: `${method.slice(0, 12)} (refused by the parser)`,
      run: () => exchange(port, line(method, "/api/agent")),
      status: 400,
      code: "BAD_REQUEST",
    });
  methods.push(
    {
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: "Upgrade: websocket on /healthz is answered as HTTP",
      run: () =>
        exchange(
          port,
          "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
          undefined,
          { keepAlive: true },
        ),
      status: 200,
      code: "ok",
      keepAlive: true,
    },
    {
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: "Upgrade: h2c on POST /api/agent, with a body, is answered as HTTP",
      run: () =>
        exchange(
          port,
          agentHead({
            connection: "Upgrade, HTTP2-Settings, close",
            upgrade: "h2c",
            "http2-settings": "AAMAAABkAARAAAAAAAIAAAAA",
            "content-type": "application/json",
            "content-length": STATUS.length,
          }),
          STATUS,
        ),
      status: 200,
      code: "ok",
    },
    {
      group:
        "what Node answers itself: CONNECT (405), Upgrade (as plain HTTP), what its parser refuses (400)",
      name: "Upgrade: websocket, unauthenticated",
      run: () =>
        exchange(
          port,
          "GET /api/agent/session HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade, close\r\nupgrade: websocket\r\n\r\n",
        ),
      status: 401,
      code: "UNAUTHENTICATED",
    },
  );

  tables("methods", methods);

  const expectations: Case[] = [
    {
      group: "Expect other than 100-continue is 417 EXPECTATION_FAILED",
      name: "Expect: foo on POST /api/agent",
      run: () => postTo("agent", STATUS, { expect: "foo" }),
      status: 417,
      code: "EXPECTATION_FAILED",
    },
    {
      group: "Expect other than 100-continue is 417 EXPECTATION_FAILED",
      name: "Expect: foo on GET /healthz",
      run: () => exchange(port, line("GET", "/healthz", "expect: foo\r\n")),
      status: 417,
      code: "EXPECTATION_FAILED",
    },
    {
      group: "Expect other than 100-continue is 417 EXPECTATION_FAILED",
      name: "Expect: 100-continue, foo",
      run: () => postTo("agent", STATUS, { expect: "100-continue, foo" }, { awaitContinue: true }),
      status: 417,
      code: "EXPECTATION_FAILED",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, the body sent after the 100",
      run: () => postTo("agent", STATUS, { expect: "100-continue" }, { awaitContinue: true }),
      status: 200,
      code: "ok",
      interim: [100],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-Continue (any case), gzip body after the 100",
      run: () =>
        postTo(
          "agent",
          zlib.gzipSync(STATUS),
          { expect: "100-Continue", "content-encoding": "gzip" },
          { awaitContinue: true },
        ),
      status: 200,
      code: "ok",
      interim: [100],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue on the console API",
      run: () => postTo("console", GOAL, { expect: "100-continue" }, { awaitContinue: true }),
      status: 200,
      code: "ok",
      interim: [100],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue on pairing",
      run: () => postTo("pairing", POLL, { expect: "100-continue" }, { awaitContinue: true }),
      status: 410,
      code: "PAIRING_EXPIRED",
      interim: [100],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, unauthenticated: refused without waiting for the body",
      run: () =>
        exchange(
          port,
          agentHead(
            { expect: "100-continue", "content-type": "application/json", "content-length": STATUS.length },
            "POST /api/agent",
            false,
          ),
          STATUS,
          { awaitContinue: true },
        ),
      status: 401,
      code: "UNAUTHENTICATED",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, a foreign token's console call: refused without waiting",
      run: () =>
        exchange(
          port,
          agentHead(
            { expect: "100-continue", "content-type": "application/json", "content-length": GOAL.length },
            "POST /api/console/repos/acme/edges/goal",
          ),
          GOAL,
          { awaitContinue: true },
        ),
      status: 401,
      code: "UNAUTHENTICATED",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, too large by its content-length: refused without waiting",
      run: () =>
        postTo("agent", padded(BOUNDS.bodyBytes + 1), { expect: "100-continue" }, { awaitContinue: true }),
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, an unaccepted encoding: refused without waiting",
      run: () =>
        postTo(
          "agent",
          STATUS,
          { expect: "100-continue", "content-encoding": "zstd" },
          { awaitContinue: true },
        ),
      status: 415,
      code: "UNSUPPORTED_ENCODING",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue, not JSON: refused without waiting",
      run: () =>
        postTo(
          "agent",
          STATUS,
          { expect: "100-continue", "content-type": "text/plain" },
          { awaitContinue: true },
        ),
      status: 415,
      code: "UNSUPPORTED_MEDIA_TYPE",
      interim: [],
    },
    {
      group:
        "Expect: 100-continue: the 100 comes when a route wants the body, which is then read; a refusal from the headers comes without it",
      name: "Expect: 100-continue on a wrong method: refused without waiting",
      run: () =>
        exchange(
          port,
          agentHead(
            { expect: "100-continue", "content-type": "application/json", "content-length": 2 },
            "PUT /api/agent",
          ),
          Buffer.from("{}"),
          { awaitContinue: true },
        ),
      status: 405,
      code: "METHOD_NOT_ALLOWED",
      interim: [],
    },
  ];

  tables("expect", expectations);
});
