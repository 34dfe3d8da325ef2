import {
  AckRequest,
  CheckpointRequest,
  ContextRequest,
  GuardRequest,
  IntentRequest,
  PublishRequest,
  ReleaseRequest,
  ScopeRequest,
  ScopesRequest,
  StatusRequest,
} from "@cohent/protocol";
import type { z } from "zod";
import type { Caller, Deps } from "../deps.js";
import { ack } from "./ack.js";
import { checkpoint } from "./checkpoint.js";
import { context } from "./context.js";
import { guardReport } from "./guard-report.js";
import { intent } from "./intent.js";
import { publish } from "./publish.js";
import { releaseRequest } from "./release-request.js";
import { scope } from "./scope.js";
import { scopes } from "./scopes.js";
import { status } from "./status.js";

export { authenticate, sessionMeta } from "./session.js";
export { poll } from "./poll.js";

type Op<S extends z.ZodType> = {
  schema: S;
  run: (deps: Deps, caller: Caller, req: z.infer<S>) => Promise<unknown>;
};
const op = <S extends z.ZodType>(schema: S, run: Op<S>["run"]): Op<S> => ({ schema, run });

/** The agent operations of POST /api/agent, by `type`. */
export const AGENT_OPERATIONS = {
  publish: op(PublishRequest, publish),
  intent: op(IntentRequest, intent),
  scope: op(ScopeRequest, scope),
  checkpoint: op(CheckpointRequest, checkpoint),
  ack: op(AckRequest, ack),
  context: op(ContextRequest, context),
  guard: op(GuardRequest, guardReport),
  status: op(StatusRequest, (deps, caller) => status(deps, caller)),
  scopes: op(ScopesRequest, (deps, caller) => scopes(deps, caller)),
  "release-request": op(ReleaseRequest, releaseRequest),
} as const;
export type AgentOperation = keyof typeof AGENT_OPERATIONS;
