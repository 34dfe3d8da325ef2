import {
  findRoot,
  readProject,
  saveCredential,
  type Project,
  fail,
  failFrom,
  ok,
  requestJson,
  os,
} from "@cohent/client";
import { CohentError } from "@cohent/protocol/codes";
import type { Envelope } from "@cohent/protocol";

/**
 * `bootstrap --approve`: pairs this machine with the checkout's repository
 * through the device grant (RFC 8628 in spirit). It prints a browser link,
 * polls until a person approves, and stores the repository-scoped
 * credential in ~/.config/cohent/credentials.json (0600), outside the
 * repository. `--token T` stores an issued token instead.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i !== -1) return args[i + 1];
  return args.find((a) => a.startsWith(name + "="))?.slice(name.length + 1);
}

function store(project: Project, token: string, person: string | undefined): string {
  return saveCredential(project, { token, ...(person ? { person } : {}), savedAt: new Date().toISOString() });
}

export async function pair(project: Project, say: (line: string) => void): Promise<Envelope<any>> {
  let user = "user";
  try {
    user = os().userInfo().username || user;
  } catch {
    /* no passwd entry */
  }
  const start = await requestJson(
    "POST",
    `${project.service}/api/pairing`,
    {},
    {
      repo: project.repository,
      machine: os().hostname().slice(0, 128),
      user: user.slice(0, 64),
      client: "cohent-adapter",
    },
    "bootstrap",
  );
  if (!start.ok) return start;
  const { verificationUri, userCode, deviceCode, expiresAt } = start.data as {
    verificationUri: string;
    userCode: string;
    deviceCode: string;
    interval: number;
    expiresAt: string;
  };
  let interval = Math.max(1, Number(start.data.interval) || 5);
  say(`Open ${verificationUri} and approve code ${userCode} for ${project.repository}.`);
  say("Waiting for approval…");
  const deadline = Date.parse(expiresAt) || Date.now() + 10 * 60_000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const env = await requestJson(
      "POST",
      `${project.service}/api/pairing/token`,
      {},
      { deviceCode },
      "bootstrap",
    );
    if (env.ok) {
      const { token, repo, person } = env.data as { token: string; repo: string; person: string };
      if (repo !== project.repository)
        return fail(
          "bootstrap",
          "REPOSITORY_MISMATCH",
          `The credential is for ${repo}, not ${project.repository}; nothing stored.`,
        );
      const file = store(project, token, person);
      return ok("bootstrap", { repository: repo, person, service: project.service, credentials: file });
    }
    const code = env.error?.code;
    if (code === "PAIRING_PENDING") continue;
    if (code === "PAIRING_SLOW_DOWN") {
      const told = Number((env.error?.details as { interval?: number } | undefined)?.interval);
      interval = told > interval ? told : interval + 5;
      continue;
    }
    if (code === "CONTROL_PLANE_UNREACHABLE") continue; // keep polling through a blip until the request expires
    return env;
  }
  return fail(
    "bootstrap",
    "PAIRING_EXPIRED",
    "Nobody approved the pairing request in time; run bootstrap --approve again.",
  );
}

export async function bootstrap(args: string[], json: boolean, scriptUrl: string): Promise<number> {
  const out = (env: Envelope<any>, human: () => string) => {
    if (json) process.stdout.write(JSON.stringify(env) + "\n");
    else (env.ok ? process.stdout : process.stderr).write(human() + "\n");
    return env.ok ? 0 : 1;
  };
  try {
    const root = findRoot(process.cwd(), scriptUrl);
    if (!root)
      throw new CohentError(
        "NOT_CONFIGURED",
        "No .cohent/project.json here or above; run npx cohent init --server URL first.",
      );
    const project = readProject(root);
    const token = flag(args, "--token");
    if (token) {
      if (!/^\S{8,}$/.test(token))
        throw new CohentError("INVALID_INPUT", "--token takes an issued agent token.");
      const file = store(project, token, undefined);
      return out(
        ok("bootstrap", {
          repository: project.repository,
          person: null,
          service: project.service,
          credentials: file,
        }),
        () => `Stored the token for ${project.repository} in ${file}.`,
      );
    }
    if (!args.includes("--approve"))
      throw new CohentError(
        "INVALID_INPUT",
        "usage: bootstrap --approve   (or bootstrap --token <issued token>)",
      );
    // Progress goes to stderr under --json so that stdout holds only the envelope.
    const env = await pair(project, (line) => (json ? process.stderr : process.stdout).write(line + "\n"));
    return out(env, () =>
      env.ok
        ? `Paired: ${env.data.person} on ${env.data.repository}. Credential stored in ${env.data.credentials}.`
        : `cohent bootstrap: ${env.error!.code}: ${env.error!.message}`,
    );
  } catch (err) {
    const env = failFrom("bootstrap", err);
    return out(env, () => `cohent bootstrap: ${env.error!.code}: ${env.error!.message}`);
  }
}
