import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CohentError } from "@cohent/protocol/codes";
import { pathOfFileUrl } from "../file-url.js";
import { configDir } from "./config-dir.js";

/**
 * Where the adapter's state lives. Committed: .cohent/project.json (service
 * and repository). Per machine, outside the repository:
 * ~/.config/cohent/credentials.json (0600), keyed by service and repository.
 * COHENT_AGENT_TOKEN overrides the stored credential.
 */

export interface Project {
  version: 1;
  service: string;
  repository: string;
}

export interface Credential {
  token: string;
  person?: string;
  savedAt: string;
}

/** The checkout root: the directory holding .cohent/. The script's own location wins, then cwd upwards. */
export function findRoot(cwd = process.cwd(), scriptUrl?: string): string | null {
  if (process.env.COHENT_ROOT) return resolve(process.env.COHENT_ROOT);
  if (scriptUrl?.startsWith("file:")) {
    const dir = dirname(pathOfFileUrl(scriptUrl));
    if (dir.endsWith("/.cohent") || dir.endsWith("\\.cohent")) return dirname(dir);
  }
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, ".cohent", "project.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

export function readProject(root: string): Project {
  const file = join(root, ".cohent", "project.json");
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    throw new CohentError(
      "NOT_CONFIGURED",
      missing
        ? `No .cohent/project.json in ${root}; run npx cohent init --server URL.`
        : `.cohent/project.json is not valid JSON; rerun npx cohent init.`,
    );
  }
  const p = raw as Partial<Project>;
  if (
    typeof p.service !== "string" ||
    !/^https?:\/\//.test(p.service) ||
    typeof p.repository !== "string" ||
    !/^[^/\s]+\/[^/\s]+$/.test(p.repository)
  ) {
    throw new CohentError(
      "NOT_CONFIGURED",
      ".cohent/project.json needs a service (http or https URL) and a repository (owner/name); rerun npx cohent init.",
    );
  }
  return { version: 1, service: p.service.replace(/\/+$/, ""), repository: p.repository };
}

export function credentialsFile(): string {
  return join(configDir(), "credentials.json");
}

type CredentialStore = { version: 1; services: Record<string, Record<string, Credential>> };

function readStore(): CredentialStore {
  try {
    const s = JSON.parse(readFileSync(credentialsFile(), "utf8")) as CredentialStore;
    if (s && typeof s === "object" && s.services && typeof s.services === "object") return s;
  } catch {
    /* a missing or broken store is an empty one */
  }
  return { version: 1, services: {} };
}

export function readCredential(project: Project): Credential | null {
  return readStore().services[project.service]?.[project.repository] ?? null;
}

export function saveCredential(project: Project, cred: Credential): string {
  const file = credentialsFile();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const store = readStore();
  (store.services[project.service] ??= {})[project.repository] = cred;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(store, null, 2) + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

/** The agent token for this checkout: COHENT_AGENT_TOKEN, then the credential store. */
export function resolveToken(project: Project): { token: string; source: "env" | "store" } {
  const env = process.env.COHENT_AGENT_TOKEN?.trim();
  if (env) return { token: env, source: "env" };
  const cred = readCredential(project);
  if (cred?.token) return { token: cred.token, source: "store" };
  throw new CohentError(
    "NOT_PAIRED",
    `This machine holds no Cohent credential for ${project.repository} at ${project.service}; run node .cohent/cohent.mjs bootstrap --approve.`,
  );
}
