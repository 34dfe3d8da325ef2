-- The lease epoch (a fencing number) of each session.
ALTER TABLE "Session" ADD COLUMN "epoch" INTEGER NOT NULL DEFAULT 0;
