import { BOUNDS } from "./bounds.js";
import { CohentError } from "./codes.js";
import { parsePattern } from "./glob-parse.js";

/**
 * The cost model of path patterns, checked before anything is matched. A
 * pattern costs the matcher states it compiles to, counted from its syntax
 * without expanding it: each character, `/`, `?` and class 1; `*` 2; `**`
 * 4; an alternative {a,b,…} the sum of its branches plus 1 a branch (nested
 * ones alike: never their product); a range {1..n} n × (width + 1). A plain
 * path costs nothing: it is compared as a string.
 *
 * Comparing two patterns costs at most the product of their costs (each pair
 * of states is visited once), and a path against a pattern at most the
 * path's length times the pattern's cost; so the bounds, one pattern and all
 * of a request's patterns together, bound every comparison a claim takes
 * part in.
 */

/** The cost of one normalized pattern, or why its syntax is not supported. */
export function pathCost(pattern: string): { cost: number; unsupported: string | null } {
  if (pattern === "**" || !/[*?[\]{}]/.test(pattern)) return { cost: 0, unsupported: null };
  const p = parsePattern(pattern);
  return { cost: p.glob ? p.states : 0, unsupported: p.unsupported };
}

const clip = (p: string) => JSON.stringify(p.length > 60 ? p.slice(0, 60) + "…" : p);

/**
 * Holds a request's normalized patterns to the bounds: INVALID_PATH for
 * unsupported syntax, PATHS_TOO_COMPLEX (saying the bound) over either bound.
 */
export function assertPathBounds(patterns: readonly string[]): void {
  let total = 0;
  for (const p of patterns) {
    const { cost, unsupported } = pathCost(p);
    if (unsupported) throw new CohentError("INVALID_PATH", `Invalid path ${clip(p)}: ${unsupported}.`);
    if (cost > BOUNDS.pathCost)
      throw new CohentError(
        "PATHS_TOO_COMPLEX",
        `Path pattern ${clip(p)} costs ${cost} matcher states; one pattern may cost at most ${BOUNDS.pathCost} (pathCost), all of a request's together ${BOUNDS.pathsCost} (pathsCost). ${HOW}`,
        { pattern: p.slice(0, 200), cost, bound: BOUNDS.pathCost },
      );
    total += cost;
  }
  if (total > BOUNDS.pathsCost)
    throw new CohentError(
      "PATHS_TOO_COMPLEX",
      `These ${patterns.length} path patterns cost ${total} matcher states together; a request's patterns may cost at most ${BOUNDS.pathsCost} (pathsCost). ${HOW}`,
      { cost: total, bound: BOUNDS.pathsCost },
    );
}

/**
 * The refusal of a claim whose comparison with the repository's claims
 * spent the whole matching budget (BOUNDS.matchSteps): unsure, so refused.
 */
export function overRoomBudget(patterns: readonly string[], claims: number): CohentError {
  return new CohentError(
    "PATHS_TOO_COMPLEX",
    `Comparing these ${patterns.length} path patterns with the ${claims} claims in this repository takes more than ${BOUNDS.matchSteps} matching steps (matchSteps); nothing was claimed. Claim fewer or simpler patterns: a directory (src/checkout) or a plain path costs least.`,
    { claims, bound: BOUNDS.matchSteps },
  );
}

const HOW =
  "Each character, ?, / and [class] costs 1, * 2, ** 4, each {a,b} branch its own cost plus 1, a range {1..n} n × (width + 1); a plain path nothing. Claim a directory (src/checkout) or fewer, simpler globs.";
