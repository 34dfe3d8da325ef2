-- A session's open intents (every publish closes them): by session and closedAt, so the lookup
-- no longer walks every intent the session ever had.
DROP INDEX "Intent_sessionId_idx";
CREATE INDEX "Intent_sessionId_closedAt_idx" ON "Intent"("sessionId", "closedAt");
