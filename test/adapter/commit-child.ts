// One `commit` in a process of its own, for the concurrency test: argv[2] is the JSON CommitOptions.
import { commitOwn } from "../../client/src/git/commit.js";

const opts = JSON.parse(process.argv[2]!);
commitOwn(opts).then(
  (r) => process.stdout.write(JSON.stringify({ ok: true, ...r })),
  (e: { code?: string; message?: string }) =>
    process.stdout.write(JSON.stringify({ ok: false, code: e.code, message: e.message })),
);
