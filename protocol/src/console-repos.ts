import { z } from "zod";
import { REPO_PAGE } from "./console-constants.js";

// The repository list's query (GET /api/console/repos): a search and a page, validated by the backend.

/** `q`: a case-insensitive substring of owner/name; `page`: 1-based; `limit`: repositories a page. */
export const RepoListQuery = z.strictObject({
  q: z
    .string()
    .max(REPO_PAGE.queryChars, `q takes at most ${REPO_PAGE.queryChars} characters`)
    .optional()
    .transform((s) => s?.trim() ?? ""),
  page: z
    .string()
    .regex(/^[1-9]\d{0,5}$/, "page takes a whole number from 1 to 999999")
    .optional()
    .transform((s) => (s ? Number(s) : 1)),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `limit takes a whole number from 1 to ${REPO_PAGE.maxLimit}`)
    .optional()
    .transform((s) => (s ? Number(s) : REPO_PAGE.defaultLimit))
    .refine(
      (n) => n >= 1 && n <= REPO_PAGE.maxLimit,
      `limit takes a whole number from 1 to ${REPO_PAGE.maxLimit}`,
    ),
});
export type RepoListQuery = z.infer<typeof RepoListQuery>;
