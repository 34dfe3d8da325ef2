import {
  BOUNDS,
  CohentError,
  RepoSetupLine,
  SETUP_LINES,
  TokenSetupLine,
  type ErrorCode,
} from "@cohent/protocol";
import type { z } from "zod";
import { newId } from "../../ids.js";
import type { Deps } from "../deps.js";
import { freeText, goalText } from "../shared/free-text.js";
import { createAgentToken } from "./admin.js";

/**
 * A company's set-up from a file: many repositories (`cohent repo add --file`) or many agent tokens
 * (`cohent token issue --file`) at once. Every line is checked first, then all of them are written in
 * one transaction: a file with a bad line writes nothing, and the error names the line. One process
 * and one transaction for the whole file, where a command per line paid a process start each.
 */

/** A line of the file, numbered from 1 as an editor shows it. */
export interface SetupLine {
  line: number;
  value: unknown;
}

/** What is wrong with a line. */
interface Problem {
  line: number;
  message: string;
}

/** The lines a refusal lists in its details. */
const LISTED = 20;

function refuse(code: ErrorCode, problems: Problem[]): never {
  const [first] = problems;
  const more =
    problems.length > 1 ? ` (and ${problems.length - 1} more line${problems.length > 2 ? "s" : ""})` : "";
  throw new CohentError(code, `line ${first!.line}: ${first!.message}${more}`, {
    lines: problems.slice(0, LISTED),
  });
}

/**
 * The lines of a set-up file: each a JSON object, or with `bare` (repositories) the name alone.
 * Blank lines are skipped; an empty file, or one of more than SETUP_LINES lines, is refused.
 */
export function setupLines(text: string, bare: boolean): SetupLine[] {
  const lines: SetupLine[] = [];
  const problems: Problem[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const s = raw.trim();
    if (!s) return;
    const line = i + 1;
    if (s.startsWith("{")) {
      try {
        lines.push({ line, value: JSON.parse(s) });
      } catch {
        problems.push({ line, message: "not a JSON object" });
      }
    } else if (bare) lines.push({ line, value: { name: s } });
    else
      problems.push({ line, message: 'expected a JSON object such as {"repo":"owner/name","person":"ada"}' });
  });
  if (problems.length) refuse("INVALID_INPUT", problems);
  if (lines.length === 0) throw new CohentError("INVALID_INPUT", "The file has no lines.");
  if (lines.length > SETUP_LINES)
    throw new CohentError(
      "INVALID_INPUT",
      `The file has ${lines.length} lines; at most ${SETUP_LINES} at once.`,
    );
  return lines;
}

/** Every line checked against `schema`; all the problems at once. */
function parseLines<S extends z.ZodType>(
  lines: SetupLine[],
  schema: S,
): { line: number; data: z.infer<S> }[] {
  const problems: Problem[] = [];
  const out: { line: number; data: z.infer<S> }[] = [];
  for (const { line, value } of lines) {
    const parsed = schema.safeParse(value);
    if (parsed.success) out.push({ line, data: parsed.data });
    else {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length ? `${issue.path.map(String).join(".")}: ` : "";
      problems.push({ line, message: `${where}${issue.message}` });
    }
  }
  if (problems.length) refuse("INVALID_INPUT", problems);
  return out;
}

/** Registers every repository of the file, or none: a name taken (already, or twice in the file) is refused. */
export async function addRepos(deps: Deps, lines: SetupLine[]) {
  const repos = parseLines(lines, RepoSetupLine);
  const seen = new Map<string, number>();
  const twice: Problem[] = [];
  for (const { line, data } of repos) {
    const at = seen.get(data.name);
    if (at !== undefined) twice.push({ line, message: `${data.name} is on line ${at} too` });
    else seen.set(data.name, line);
  }
  if (twice.length) refuse("INVALID_INPUT", twice);
  return deps.store.tx(async (t) => {
    const known = await t.repos.known([...seen.keys()]);
    if (known.size)
      refuse(
        "REPOSITORY_EXISTS",
        repos
          .filter((r) => known.has(r.data.name))
          .map((r) => ({ line: r.line, message: `${r.data.name} is already registered` })),
      );
    const createdAt = deps.clock();
    const added: { line: number; id: string; name: string }[] = [];
    for (const { line, data } of repos) {
      const row = await t.repos.create({
        id: newId("rep"),
        name: data.name,
        goal: goalText(data.goal ?? ""),
        caseInsensitive: !!data.caseInsensitive,
        createdAt,
      });
      added.push({ line, id: row.id, name: row.name });
    }
    return added;
  });
}

/**
 * Issues an agent token for every line of the file, or none: an unknown repository is refused. Each
 * token is 32 random bytes, stored as its SHA-256 (ids.ts hashToken): a secret of that entropy needs
 * no slow hash, so a thousand cost milliseconds. The secrets are returned once, here.
 */
export async function issueTokens(deps: Deps, lines: SetupLine[]) {
  const wanted = parseLines(lines, TokenSetupLine);
  return deps.store.tx(async (t) => {
    const repos = new Map<string, { id: string; name: string } | null>();
    for (const { data } of wanted)
      if (!repos.has(data.repo)) repos.set(data.repo, await t.repos.byName(data.repo));
    const unknown = wanted.filter((w) => !repos.get(w.data.repo));
    if (unknown.length)
      refuse(
        "REPOSITORY_NOT_FOUND",
        unknown.map((w) => ({ line: w.line, message: `${w.data.repo} is not registered` })),
      );
    const issued: {
      line: number;
      id: string;
      token: string;
      repo: string;
      person: string;
      client: string | null;
    }[] = [];
    for (const { line, data } of wanted) {
      const client = data.client === undefined ? null : freeText(data.client, BOUNDS.identityChars);
      const { id, token } = await createAgentToken(t, deps, {
        repo: repos.get(data.repo)!,
        person: data.person,
        client,
      });
      issued.push({ line, id, token, repo: data.repo, person: data.person, client });
    }
    return issued;
  });
}
