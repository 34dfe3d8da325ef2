-- A shell write caught after the call (guard kind shell-write): its command, whether it is restorable, and who wrote.
ALTER TABLE "GuardCatch" ADD COLUMN     "detail" TEXT;
