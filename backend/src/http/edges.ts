import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { CohentError, failure, SERVER_METHODS, type ErrorCode } from "@cohent/protocol";
import { baseMeta } from "./envelope.js";

/**
 * The requests Node answers before Koa sees them, or would not answer at
 * all, each given a v1 failure envelope with a stable code:
 *
 * - what the parser refuses (headers too large, a NUL or bare CR in a header,
 *   a malformed request line, a method it does not know): 431 / 400;
 * - CONNECT, which Node hands to a 'connect' listener or else resets: 405;
 * - an Expect other than 100-continue ('checkExpectation'): 417;
 * - Expect: 100-continue ('checkContinue'): the request goes to the app, and
 *   the 100 is sent only when a route reads the body (body.ts), so a refusal
 *   decided from the headers reaches a waiting client before it sends a byte.
 *
 * There is no 'upgrade' listener on purpose: without one Node serves an
 * Upgrade request (websocket, h2c) as plain HTTP/1.1, which RFC 9110 allows.
 */

const continuing = new WeakSet<IncomingMessage>();

/** Sends the 100 Continue a waiting client asked for, once, if the answer has not started. */
export function sendContinue(req: IncomingMessage, res: ServerResponse): void {
  if (!continuing.delete(req) || res.headersSent) return;
  res.writeContinue();
}

function envelopeBody(code: ErrorCode, clock: () => Date): { error: CohentError; body: string } {
  const error = new CohentError(code);
  return { error, body: JSON.stringify(failure("http", error, baseMeta(clock))) };
}

/** A whole answer written on a raw socket, which then closes (and is dropped if the peer never does). */
function answerSocket(
  socket: Socket,
  code: ErrorCode,
  clock: () => Date,
  headers: Record<string, string> = {},
): void {
  if (!socket.writable) return void socket.destroy();
  const { error, body } = envelopeBody(code, clock);
  const head = [
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "connection: close",
  ];
  // What the peer still sends (a CONNECT's tunnel bytes) is read and dropped: unread bytes would turn the close into a reset.
  socket.on("error", () => {}).resume();
  socket.setTimeout(5_000, () => socket.destroy());
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/** A whole answer through Node's response, then the connection closes (the body, if any, is not read). */
function answerResponse(res: ServerResponse, code: ErrorCode, clock: () => Date): void {
  const { error, body } = envelopeBody(code, clock);
  res.writeHead(error.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body);
}

/** The only expectation there is (RFC 9110 10.1.1), alone; Node also routes lists that contain it here. */
const CONTINUE = /^\s*100-continue\s*$/i;

export function attachEdges(
  server: http.Server,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  clock: () => Date,
): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === "ECONNRESET") return void socket.destroy();
    answerSocket(socket, err.code === "HPE_HEADER_OVERFLOW" ? "HEADERS_TOO_LARGE" : "BAD_REQUEST", clock);
  });
  server.on("connect", (_req: IncomingMessage, socket: Socket) =>
    answerSocket(socket, "METHOD_NOT_ALLOWED", clock, { allow: SERVER_METHODS.join(", ") }),
  );
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) =>
    answerResponse(res, "EXPECTATION_FAILED", clock),
  );
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!CONTINUE.test(req.headers.expect ?? "")) return answerResponse(res, "EXPECTATION_FAILED", clock);
    continuing.add(req);
    handler(req, res);
  });
}

/** Whether the client waits for a 100 Continue before it sends the body. */
export const awaitsContinue = (req: IncomingMessage): boolean => continuing.has(req);
