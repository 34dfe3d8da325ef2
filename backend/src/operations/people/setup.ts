import {
  BOUNDS,
  CohentError,
  RepoSetupLine,
  SETUP_LINES,
  TokenSetupLine,
  type ErrorCode,
} from "@cohent/protocol";
import type { z } from "zod";
import { hashToken, newId, newSecret } from "../../ids.js";
import type { Deps } from "../deps.js";
import { freeText, goalText } from "../shared/free-text.js";

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
    const rows = await t.repos.createMany(
      repos.map(({ data }) => ({
        id: newId("rep"),
        name: data.name,
        goal: goalText(data.goal ?? ""),
        caseInsensitive: !!data.caseInsensitive,
        createdAt,
      })),
    );
    return rows.map((row, i) => ({ line: repos[i]!.line, id: row.id, name: row.name }));
  });
}

/**
 * Issues an agent token for every line of the file, or none: an unknown repository is refused. Each
 * token is 32 random bytes, stored as its SHA-256 (ids.ts hashToken), as admin issueToken stores one:
 * a secret of that entropy needs no slow hash, so a thousand cost milliseconds. The secrets are
 * returned once, here.
 */
export async function issueTokens(deps: Deps, lines: SetupLine[]) {
  const wanted = parseLines(lines, TokenSetupLine);
  return deps.store.tx(async (t) => {
    // One statement for every repository the file names (a read each cost PostgreSQL a round trip per line).
    const names = [...new Set(wanted.map((w) => w.data.repo))];
    const repos = new Map((await t.repos.named(names)).map((r) => [r.name, r]));
    const unknown = wanted.filter((w) => !repos.has(w.data.repo));
    if (unknown.length)
      refuse(
        "REPOSITORY_NOT_FOUND",
        unknown.map((w) => ({ line: w.line, message: `${w.data.repo} is not registered` })),
      );
    const at = deps.clock();
    const issued = wanted.map(({ line, data }) => ({
      line,
      id: newId("tok"),
      token: newSecret("coh"),
      repo: data.repo,
      person: data.person,
      client: data.client === undefined ? null : freeText(data.client, BOUNDS.identityChars),
    }));
    await t.tokens.createMany(
      issued.map((i) => ({
        id: i.id,
        repoId: repos.get(i.repo)!.id,
        person: i.person,
        client: i.client,
        tokenHash: hashToken(i.token),
        at,
      })),
    );
    return issued;
  });
}
