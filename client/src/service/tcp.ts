import { util } from "../builtins.js";
import {
  expectedLength,
  lastChunkIn,
  parseResponse,
  WireError,
  type Target,
  type WireResponse,
} from "./wire.js";

/**
 * The lean transport: one HTTP/1.1 exchange over Node's own TCP handle
 * (process.binding("tcp_wrap")), without node:net, its streams or node:http.
 * A hook is a fresh process that makes one or two requests; loading and
 * first running those modules cost it about 20 ms, several times the round
 * trip itself (bench/adapter-coldstart.ts measures both transports).
 *
 * process.binding is deprecated in the documentation only (DEP0111) and
 * still serves tcp_wrap and stream_wrap on every Node this adapter runs on.
 * Whenever it cannot (no binding, a changed shape, --pending-deprecation,
 * which would print a warning), or for HTTPS or a host name to resolve,
 * http.ts uses node:http as before; COHENT_TRANSPORT=node forces that.
 */

export interface Attempt {
  /** Resolves with the whole response; rejects with an Error whose `code` (ECONNREFUSED…) or message says why. */
  done: Promise<WireResponse>;
  abort(): void;
}

interface Handle {
  connect(req: object, host: string, port: number): number;
  connect6(req: object, host: string, port: number): number;
  setNoDelay(on: boolean): void;
  writeUtf8String(req: object, text: string): number;
  readStart(): number;
  close(cb?: () => void): void;
  onread: (buf: ArrayBuffer | undefined) => void;
}

interface Bindings {
  TCP: new (type: number) => Handle;
  TCPConnectWrap: new () => { oncomplete?: (status: number) => void };
  SOCKET: number;
  WriteWrap: new () => { handle?: Handle; oncomplete?: (status: number) => void; async?: boolean };
  state: Int32Array;
  kRead: number;
  kOffset: number;
}

let bindings: Bindings | null | undefined;

function load(): Bindings | null {
  if (bindings !== undefined) return bindings;
  bindings = null;
  const flags = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;
  const binding = (process as { binding?: (name: string) => any }).binding;
  if (/pending-deprecation/.test(flags) || !binding) return null;
  try {
    const tcp = binding("tcp_wrap");
    const stream = binding("stream_wrap");
    const b: Bindings = {
      TCP: tcp.TCP,
      TCPConnectWrap: tcp.TCPConnectWrap,
      SOCKET: tcp.constants?.SOCKET,
      WriteWrap: stream.WriteWrap,
      state: stream.streamBaseState,
      kRead: stream.kReadBytesOrError,
      kOffset: stream.kArrayBufferOffset,
    };
    const ok =
      typeof b.TCP === "function" &&
      typeof b.TCP.prototype.connect === "function" &&
      typeof b.TCP.prototype.writeUtf8String === "function" &&
      typeof b.TCPConnectWrap === "function" &&
      typeof b.WriteWrap === "function" &&
      typeof b.SOCKET === "number" &&
      b.state instanceof Int32Array &&
      typeof b.kRead === "number" &&
      typeof b.kOffset === "number";
    if (ok) bindings = b;
  } catch {
    /* node:http then */
  }
  return bindings;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** Where the lean transport connects for this URL, or null when node:http must serve it. */
export function leanTarget(target: Target): { host: string; port: number; v6: boolean } | null {
  if (target.protocol !== "http:") return null;
  const port = Number(target.port || 80);
  const host = target.hostname;
  // localhost as 127.0.0.1; a refusal there is retried through node:http, which also tries ::1 (http.ts).
  if (host === "localhost") return { host: "127.0.0.1", port, v6: false };
  if (IPV4.test(host)) return { host, port, v6: false };
  if (host.startsWith("[") && host.endsWith("]")) return { host: host.slice(1, -1), port, v6: true };
  return null;
}

/** A service's answer is kilobytes; a peer that sends more than this is not one, and is not read to the end. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** node:http allows a 16 KiB head; one four times that is no answer of the service's. */
const MAX_HEAD_BYTES = 64 * 1024;

/** libuv's end of stream, the same number on every platform. */
const UV_EOF = -4095;

function errorOf(status: number): Error {
  let name = `E${-status}`;
  try {
    name = util().getSystemErrorName(status);
  } catch {
    /* the number, then */
  }
  return Object.assign(new Error(name), { code: name });
}

/** One exchange, or null when the bindings are not usable here. Throws WireError on a header node:http would refuse. */
export function leanExchange(
  where: { host: string; port: number; v6: boolean },
  text: string,
): Attempt | null {
  const b = process.env.COHENT_TRANSPORT === "node" ? null : load();
  if (!b) return null;
  let handle: Handle | null = new b.TCP(b.SOCKET);
  const chunks: Buffer[] = [];
  let received = 0;
  let expect: ReturnType<typeof expectedLength> = null;
  let settle: { resolve(r: WireResponse): void; reject(e: Error): void };
  const done = new Promise<WireResponse>((resolve, reject) => (settle = { resolve, reject }));
  const close = () => {
    const h = handle;
    handle = null;
    h?.close(); // no read follows a close (and onread must stay a function: Node asserts it)
  };
  const fail = (e: Error) => {
    close();
    settle.reject(e);
  };
  const finish = () => {
    close();
    try {
      settle.resolve(parseResponse(Buffer.concat(chunks)));
    } catch (err) {
      settle.reject(err instanceof WireError ? err : new Error(String(err)));
    }
  };
  const connect = new b.TCPConnectWrap();
  connect.oncomplete = (status: number) => {
    if (!handle) return;
    if (status < 0) return fail(errorOf(status));
    handle.setNoDelay(true);
    handle.onread = (buf) => {
      const n = b.state[b.kRead]!;
      if (n > 0 && buf) {
        chunks.push(Buffer.from(Buffer.from(buf, b.state[b.kOffset]!, n)));
        received += n;
        if (received > MAX_RESPONSE_BYTES)
          return fail(new WireError(`an answer larger than ${MAX_RESPONSE_BYTES} bytes`));
        // Whole already (its length, its last chunk): no wait for the close, which a proxy may hold back.
        try {
          expect ??= expectedLength(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
        } catch (err) {
          return fail(err as Error);
        }
        if (expect === null && received > MAX_HEAD_BYTES)
          return fail(new WireError(`a response head larger than ${MAX_HEAD_BYTES} bytes`));
        if (typeof expect === "number" && received >= expect) finish();
        else if (expect === "chunked" && lastChunkIn(chunks.at(-1)!)) {
          let whole: WireResponse;
          try {
            whole = parseResponse(Buffer.concat(chunks));
          } catch {
            return; // a chunk's data that only ends like the last chunk: read on
          }
          close();
          settle.resolve(whole);
        }
        return;
      }
      if (n === 0) return;
      // EOF (UV_EOF) ends the response, the server having closed; any other negative is an error.
      if (n !== UV_EOF) return fail(errorOf(n));
      finish();
    };
    const write = new b.WriteWrap();
    write.handle = handle;
    write.oncomplete = (s: number) => {
      if (s < 0) fail(errorOf(s));
    };
    write.async = false;
    const w = handle.writeUtf8String(write, text);
    if (w < 0) return fail(errorOf(w));
    const r = handle.readStart();
    if (r < 0) fail(errorOf(r));
  };
  const err = where.v6
    ? handle.connect6(connect, where.host, where.port)
    : handle.connect(connect, where.host, where.port);
  if (err < 0) {
    const e = errorOf(err);
    close();
    return { done: Promise.reject(e), abort: () => undefined };
  }
  return { done, abort: close };
}
