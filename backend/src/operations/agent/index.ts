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

/** The request schema of each agent operation of POST /api/agent, by `type`. */
const AGENT_REQUESTS = {
  publish: PublishRequest,
  intent: IntentRequest,
  scope: ScopeRequest,
  checkpoint: CheckpointRequest,
  ack: AckRequest,
  context: ContextRequest,
  guard: GuardRequest,
  status: StatusRequest,
  scopes: ScopesRequest,
  "release-request": ReleaseRequest,
} as const;
export type AgentOperation = keyof typeof AGENT_REQUESTS;
/** Each operation's parsed request. */
export type AgentRequests = { [K in AgentOperation]: z.infer<(typeof AGENT_REQUESTS)[K]> };

/** One operation: its request schema, and what answers the parsed request. */
export type AgentOperationOf<K extends AgentOperation> = {
  schema: z.ZodType<AgentRequests[K]>;
  run: (deps: Deps, caller: Caller, req: AgentRequests[K]) => Promise<unknown>;
};

/**
 * The agent operations of POST /api/agent, by `type`. A mapped type, so that indexing it with a
 * generic `K` keeps the schema and the run of one operation together (`AgentOperationOf<K>`).
 */
export const AGENT_OPERATIONS: { [K in AgentOperation]: AgentOperationOf<K> } = {
  publish: { schema: AGENT_REQUESTS.publish, run: publish },
  intent: { schema: AGENT_REQUESTS.intent, run: intent },
  scope: { schema: AGENT_REQUESTS.scope, run: scope },
  checkpoint: { schema: AGENT_REQUESTS.checkpoint, run: checkpoint },
  ack: { schema: AGENT_REQUESTS.ack, run: ack },
  context: { schema: AGENT_REQUESTS.context, run: context },
  guard: { schema: AGENT_REQUESTS.guard, run: guardReport },
  status: { schema: AGENT_REQUESTS.status, run: (deps, caller) => status(deps, caller) },
  scopes: { schema: AGENT_REQUESTS.scopes, run: (deps, caller) => scopes(deps, caller) },
  "release-request": { schema: AGENT_REQUESTS["release-request"], run: releaseRequest },
};
