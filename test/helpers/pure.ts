// vitest setupFiles of the `unit` project (vitest.config.ts): a unit test starts no process and opens
// no socket. Each of these throws in a unit test's worker, naming the layer the file belongs to, so
// that `npm run test:unit` stays pure and fast (docs/testing.md). A database is a socket
// (PostgreSQL) or a store the helpers open (test/helpers/backend.ts): the latter is for review to catch.
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const childProcess = require("node:child_process") as Record<string, unknown>;
const net = require("node:net") as typeof import("node:net");

const refuse = (what: string) =>
  function refused(): never {
    throw new Error(
      `${what} in a unit test: this file belongs to the integration project ` +
        `(vitest.config.ts; docs/testing.md says which layer a test belongs to)`,
    );
  };

for (const fn of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"])
  childProcess[fn] = refuse(`child_process.${fn}`);
net.Server.prototype.listen = refuse("A server listening") as never;
net.Socket.prototype.connect = refuse("A network connection") as never;
// `import { spawn } from "node:child_process"` reads the same, replaced functions.
syncBuiltinESMExports();
