import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { CohentError } from "@cohent/protocol/codes";
import { CONTROL_KINDS } from "@cohent/protocol/console-constants";
import { COHENT_VERSION } from "@cohent/protocol/version";
import { consoleConfigFromEnv, resolveDatabaseUrl, resolvePort } from "./config.js";
import type { Deps } from "./operations/deps.js";

/**
 * `cohent`: the admin CLI. It talks to the store directly (the same
 * operation layer the console will use), so it works with or without a
 * running server. stdout carries only the answer; diagnostics go to stderr.
 * Only commander and the configuration load up front: `--help` and
 * `--version` never parse the server, Prisma or the store (the package's
 * start-up budget is 2× `node -e 0`); each action imports what it uses.
 * The package prints the top-level help from a file rendered by this code
 * at pack time; no command description may wrap at 80 columns there.
 */

/** A subcommand that opens the store: every one takes --data-dir. */
const storeCommand = (parent: Command, spec: string) =>
  parent
    .command(spec)
    .addOption(
      new Option("--data-dir <dir>", "directory of the embedded SQLite database (env COHENT_DATA_DIR)"),
    );

const admin = () => import("./operations/people/admin.js");
const setup = () => import("./operations/people/setup.js");

/** A usage mistake, reported as the other refusals are (cohent: INVALID_INPUT: …), exit 1. */
const usage = (message: string) => new CohentError("INVALID_INPUT", message);

/** A set-up file's text; `-` is stdin. */
function readSetupFile(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    throw usage(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
const since = async (text: string) => (await import("./core/since.js")).parseSince(text, new Date());

async function withDeps<T>(opts: { dataDir?: string }, fn: (deps: Deps) => Promise<T>): Promise<T> {
  const [{ openStore }, { createLogger }, { DEFAULT_LEASE }] = await Promise.all([
    import("./store/index.js"),
    import("./log.js"),
    import("./core/lease.js"),
  ]);
  // No Prisma client: no admin command inspects, and loading it was a third of a short command.
  const { db, store } = await openStore(resolveDatabaseUrl(opts), { inspect: false });
  const log = createLogger(process.env.COHENT_LOG_LEVEL ?? "warn");
  try {
    return await fn({ store, clock: () => new Date(), lease: DEFAULT_LEASE, log });
  } finally {
    await db.close();
  }
}

function print(value: unknown, json: boolean | undefined, human: () => string) {
  process.stdout.write((json ? JSON.stringify(value, null, 2) : human()) + "\n");
}

export function buildCli(): Command {
  const program = new Command("cohent")
    .description("Cohent: a coordination bus for coding agents")
    .version(COHENT_VERSION, "-V, --version")
    .showHelpAfterError();
  // `init` is the adapter's; the bins hand it over before this parser runs.
  program.addHelpText(
    "after",
    "\nIn a Git checkout:\n  cohent init --server <url> [--repo owner/name] [--mcp-write] [--json]   set it up for Cohent\n  cohent init --upgrade [--json]                                          rewrite its Cohent files with this version",
  );

  storeCommand(program, "serve")
    .description("serve the API (and apply pending migrations first)")
    .option("--port <n>", "port (env COHENT_PORT, default 4317)")
    .option("--host <host>", "interface to listen on", process.env.COHENT_HOST ?? "127.0.0.1")
    .action(async (opts: { port?: string; host: string; dataDir?: string }) => {
      const [{ createLogger }, { startServer }, { createLoginLink }] = await Promise.all([
        import("./log.js"),
        import("./server.js"),
        import("./operations/people/signin.js"),
      ]);
      const log = createLogger();
      const databaseUrl = resolveDatabaseUrl(opts);
      const consoleConfig = consoleConfigFromEnv();
      const server = await startServer({
        databaseUrl,
        port: resolvePort(opts.port),
        host: opts.host,
        log,
        console: consoleConfig,
      });
      log.info(
        { url: server.url, database: databaseUrl.startsWith("file:") ? databaseUrl : "postgresql" },
        "cohent serving",
      );
      process.stderr.write(`cohent serving on ${server.url}\n`);
      if (!consoleConfig.github) {
        // No GitHub configured: a one-time local admin link, like a notebook server's token link.
        const base = consoleConfig.publicUrl ?? server.url;
        process.stderr.write(
          `Control Room sign-in (one-time link): ${base}/auth/local?token=${await createLoginLink(server.deps)}\n`,
        );
      } else {
        process.stderr.write(
          `Control Room: ${consoleConfig.publicUrl ?? server.url} (sign in with GitHub)\n`,
        );
      }
      const stop = () => void server.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });

  const repo = program.command("repo").description("repositories");
  storeCommand(repo, "add [name]")
    .description("register owner/name, or with --file every repository of a file")
    .option("--goal <text>", "the project goal that publish hands to agents", "")
    .option("--case-insensitive", "match scope paths case-insensitively")
    .option("--json", "print JSON")
    .option(
      "--file <path>",
      "one repository a line (owner/name, or a JSON object with name, goal, caseInsensitive; - reads stdin), all or none; prints a JSON line each",
    )
    .action(
      async (
        name: string | undefined,
        opts: { goal: string; caseInsensitive?: boolean; dataDir?: string; json?: boolean; file?: string },
      ) => {
        if (opts.file !== undefined) {
          if (name !== undefined) throw usage("repo add: give a name or --file, not both");
          const lines = (await setup()).setupLines(readSetupFile(opts.file), true);
          const added = await withDeps(opts, async (deps) => (await setup()).addRepos(deps, lines));
          process.stdout.write(added.map((r) => JSON.stringify(r) + "\n").join(""));
          process.stderr.write(`added ${added.length} repositories\n`);
          return;
        }
        if (name === undefined) throw usage("repo add: give a name (owner/name) or --file <path>");
        const row = await withDeps(opts, async (deps) =>
          (await admin()).addRepo(deps, { name, goal: opts.goal, caseInsensitive: !!opts.caseInsensitive }),
        );
        print(
          { id: row.id, name: row.name, goal: row.goal },
          opts.json,
          () => `added ${row.name} (${row.id})`,
        );
      },
    );
  storeCommand(repo, "goal <name> <goal>")
    .description("set the project goal")
    .action(async (name: string, goal: string, opts: { dataDir?: string }) => {
      await withDeps(opts, async (deps) => (await admin()).setGoal(deps, name, goal));
      print(null, false, () => `goal set for ${name}`);
    });

  const token = program.command("token").description("agent tokens");
  storeCommand(token, "issue")
    .description("issue an agent token; prints only the token, which is shown once")
    .option("--repo <name>", "owner/name")
    .option("--person <name>", "the person the agent works for")
    .option("--client <name>", "the client the token is for (Codex, Claude Code, …)")
    .option(
      "--file <path>",
      'one token a line, a JSON object {"repo","person","client"?} (- reads stdin), all or none; prints a JSON line with the token each',
    )
    .action(
      async (opts: { repo?: string; person?: string; client?: string; dataDir?: string; file?: string }) => {
        if (opts.file !== undefined) {
          if (opts.repo !== undefined || opts.person !== undefined || opts.client !== undefined)
            throw usage("token issue: --file takes each line's repo, person and client, not options");
          const lines = (await setup()).setupLines(readSetupFile(opts.file), false);
          const issued = await withDeps(opts, async (deps) => (await setup()).issueTokens(deps, lines));
          process.stdout.write(issued.map((r) => JSON.stringify(r) + "\n").join(""));
          process.stderr.write(`issued ${issued.length} tokens\n`);
          return;
        }
        if (opts.repo === undefined || opts.person === undefined)
          throw usage("token issue: --repo <name> and --person <name> are required (or --file <path>)");
        const { repo, person, client } = opts;
        const issued = await withDeps(opts, async (deps) =>
          (await admin()).issueToken(deps, { repo, person, ...(client !== undefined ? { client } : {}) }),
        );
        process.stderr.write(`issued ${issued.id} for ${issued.person} on ${issued.repo}\n`);
        process.stdout.write(issued.token + "\n");
      },
    );
  storeCommand(token, "revoke <tokenId>").action(async (tokenId: string, opts: { dataDir?: string }) => {
    await withDeps(opts, async (deps) => (await admin()).revokeToken(deps, tokenId));
    print(null, false, () => `revoked ${tokenId}`);
  });

  const sessions = program.command("sessions").description("agent sessions");
  storeCommand(sessions, "list")
    .requiredOption("--repo <name>", "owner/name")
    .option("--json", "print JSON")
    .action(async (opts: { repo: string; dataDir?: string; json?: boolean }) => {
      const rows = await withDeps(opts, async (deps) => (await admin()).listSessions(deps, opts.repo));
      print(rows, opts.json, () =>
        rows.length === 0
          ? "no sessions"
          : rows
              .map(
                (s) =>
                  `${s.id}  ${s.person}  ${s.client ?? "-"}  ${s.model ?? "-"}  ${s.control}  ${s.guard}  ${s.enforcement.level} (${s.enforcement.why})  last ${s.lastSeenAt}  ${s.intents.map((i) => `${i.id}:${i.state}/${i.lastAction}`).join(" ")}`,
              )
              .join("\n"),
      );
    });
  for (const kind of CONTROL_KINDS) {
    storeCommand(sessions, `${kind} <sessionId>`)
      .description(`${kind} an agent session; its next call reads it`)
      .option("--reason <text>", "shown to the agent")
      .option("--actor <name>", "who gives the command", process.env.USER ?? "admin")
      .action(async (sessionId: string, opts: { reason?: string; actor: string; dataDir?: string }) => {
        const r = await withDeps(opts, async (deps) =>
          (await admin()).controlSession(deps, {
            sessionId,
            kind,
            actor: opts.actor,
            ...(opts.reason ? { reason: opts.reason } : {}),
          }),
        );
        print(null, false, () => `${r.id} is ${r.control}`);
      });
  }

  storeCommand(program, "metrics")
    .description("coordination metrics of a repository")
    .requiredOption("--repo <name>", "owner/name")
    .option("--since <duration>", "only the last 30m, 24h, 7d, …")
    .option("--json", "print JSON")
    .action(async (opts: { repo: string; since?: string; dataDir?: string; json?: boolean }) => {
      const from = opts.since ? await since(opts.since) : undefined;
      const m = await withDeps(opts, async (deps) => (await admin()).metrics(deps, opts.repo, from));
      print(m, opts.json, () =>
        Object.entries(m)
          .map(([k, v]) => `${k}: ${v ?? "-"}`)
          .join("\n"),
      );
    });

  storeCommand(program, "signin-link")
    .description("print a one-time admin sign-in link to the Control Room")
    .option(
      "--url <base>",
      "the server's address",
      process.env.COHENT_PUBLIC_URL ?? `http://127.0.0.1:${resolvePort(undefined)}`,
    )
    .action(async (opts: { url: string; dataDir?: string }) => {
      const { createLoginLink } = await import("./operations/people/signin.js");
      const token = await withDeps(opts, (deps) => createLoginLink(deps));
      process.stdout.write(`${opts.url.replace(/\/$/, "")}/auth/local?token=${token}\n`);
    });

  storeCommand(program, "recap")
    .description("an account of a time window: done, blocked, waiting")
    .requiredOption("--repo <name>", "owner/name")
    .option("--since <duration>", "the window: 30m, 24h, 7d, …", "24h")
    .option("--json", "print JSON")
    .action(async (opts: { repo: string; since: string; dataDir?: string; json?: boolean }) => {
      const { recap, renderRecap } = await import("./operations/people/recap.js");
      const from = await since(opts.since);
      const r = await withDeps(opts, (deps) => recap(deps, opts.repo, from));
      print(r, opts.json, () => renderRecap(r));
    });

  return program;
}

export async function main(argv = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    // Only a failure pays for the zod-aware mapping.
    const { toCohentError } = await import("@cohent/protocol");
    const e = toCohentError(err);
    const message = e.code === "INTERNAL" && err instanceof Error ? err.message : e.message;
    const details = e.code === "INVALID_INPUT" && e.details ? ` ${JSON.stringify(e.details)}` : "";
    process.stderr.write(`cohent: ${e.code}: ${message}${details}\n`);
    process.exitCode = 1;
  }
}
