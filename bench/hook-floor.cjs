"use strict";
/**
 * The floor of an in-scope edit's decision, for bench/adapter-coldstart.ts: a hand-written hook that
 * does only what no guard can skip, and nothing of what the adapter does besides (no dialects, no
 * guard files, no peers' claims, no code cache, no poll, no state written). It reads the payload
 * (Codex's apply_patch), project.json and runtime.json, checks the patch's one target against the
 * session's scope, and makes the kill-switch read: one GET over Node's TCP handle, as the adapter's
 * lean transport does (adapter/src/service/tcp.ts), under a deadline. It allows by printing nothing
 * and refuses by exit 2, so its time is the budget's lower bound on this machine: what the goal
 * (≤ 1.25× node -e 0) leaves for the adapter's own code is the goal minus this row.
 */
const { readFileSync } = require("node:fs");

const refuse = (why) => {
  process.stderr.write(`floor: ${why}\n`);
  process.exit(2);
};
const payload = JSON.parse(readFileSync(0, "utf8"));
const root = payload.cwd;
const project = JSON.parse(readFileSync(`${root}/.cohent/project.json`, "utf8"));
const session = JSON.parse(readFileSync(`${root}/.cohent/runtime.json`, "utf8")).sessions[payload.session_id];
if (!session || !session.intentId) refuse("no intent");
const target = /\*\*\* (?:Add|Update|Delete) File: (.+)/.exec(payload.tool_input.command)?.[1];
if (!target || !session.scope.some((s) => target === s || target.startsWith(`${s}/`)))
  refuse("outside the scope");
const service = /^http:\/\/(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(project.service);
if (!service) refuse("not a plain service URL");

const deadline = setTimeout(() => refuse("no answer"), 25_000);
const tcp = process.binding("tcp_wrap");
const stream = process.binding("stream_wrap");
const handle = new tcp.TCP(tcp.constants.SOCKET);
const chunks = [];
handle.onread = (buf) => {
  const n = stream.streamBaseState[stream.kReadBytesOrError];
  if (n > 0 && buf) {
    chunks.push(Buffer.from(buf, stream.streamBaseState[stream.kArrayBufferOffset], n));
    const text = Buffer.concat(chunks).toString("latin1");
    const head = text.indexOf("\r\n\r\n");
    const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
    if (head < 0 || length === undefined || text.length < head + 4 + Number(length)) return;
    handle.close();
    clearTimeout(deadline);
    if (!text.startsWith("HTTP/1.1 200")) refuse(text.slice(0, 40));
    const control = JSON.parse(text.slice(head + 4)).data?.control;
    if (control !== "active") refuse(`control ${control}`);
    return; // allowed: nothing printed, exit 0
  }
  if (n < 0) refuse("connection closed");
};
const connect = new tcp.TCPConnectWrap();
connect.oncomplete = (status) => {
  if (status < 0) refuse("cannot connect");
  const write = new stream.WriteWrap();
  write.handle = handle;
  write.oncomplete = () => {};
  write.async = false;
  handle.writeUtf8String(
    write,
    `GET /api/agent/session HTTP/1.1\r\nHost: ${service[1]}:${service[2]}\r\nAuthorization: Bearer ${process.env.COHENT_AGENT_TOKEN}\r\nx-cohent-session: ${payload.session_id}\r\nConnection: close\r\n\r\n`,
  );
  handle.readStart();
};
handle.connect(connect, service[1], Number(service[2]));
