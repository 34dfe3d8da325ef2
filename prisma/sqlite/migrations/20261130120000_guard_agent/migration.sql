-- AlterTable
ALTER TABLE "GuardCatch" ADD COLUMN "agentId" TEXT;
