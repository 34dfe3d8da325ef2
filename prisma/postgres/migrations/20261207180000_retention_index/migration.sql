-- The retention rule (store/retention) deletes the oldest decisions, notices, packets and guard catches first.
-- CreateIndex
CREATE INDEX "Notice_createdAt_idx" ON "Notice"("createdAt");

-- CreateIndex
CREATE INDEX "Decision_createdAt_idx" ON "Decision"("createdAt");

-- CreateIndex
CREATE INDEX "Packet_createdAt_idx" ON "Packet"("createdAt");

-- CreateIndex
CREATE INDEX "GuardCatch_createdAt_idx" ON "GuardCatch"("createdAt");
