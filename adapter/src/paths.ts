/**
 * Repository paths for the adapter: the protocol's own normalization and
 * minimatch-based coverage, so that the hook and the server agree by
 * construction. That module is free of zod, which keeps the hook bundle lean.
 */
export { covers, isGlob, normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
