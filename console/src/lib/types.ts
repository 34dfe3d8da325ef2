export interface Party {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}
export interface Work {
  intentId: string;
  sessionId: string;
  person: string;
  client: string | null;
  model: string | null;
  prompt: string;
  objective: string | null;
  outputs: string[];
  dependsOn: string[];
  state: string;
  lastAction: string;
  scope: string[];
  pathHints: string[];
  overlaps: { with: Party; paths: string[]; claimed: boolean }[];
  collisions: { at: string; kind: string; paths: string[]; refused: Party; holders: Party[] }[];
  lastCheckpoint: { status: string; summary: string; at: string } | null;
  guard: "calling-in" | "silent" | "expired";
  lastCallAt: string;
  control: "active" | "paused" | "cancelled";
  controlReason: string | null;
}
export interface Pairing {
  id: string;
  repo: string;
  repoKnown: boolean;
  machine: string;
  user: string;
  client: string | null;
  userCode: string;
  status: string;
  approvedBy: string | null;
  person: string | null;
  createdAt: string;
  expiresAt: string;
  mayApprove?: boolean;
}
export interface Overview {
  repo: { name: string; goal: string; createdAt: string };
  serverTime: string;
  work: Work[];
  decisions: { id: string; action: string; reason: string; at: string; subject: Party; peers: Party[] }[];
  commands: { id: string; kind: string; actor: string; reason: string | null; at: string; sessionId: string; person: string; client: string | null }[];
  sessions: { id: string; key: string; person: string; client: string | null; model: string | null; control: string; guard: string; lastSeenAt: string; intents: { id: string; state: string; lastAction: string }[] }[];
  tokens: { id: string; person: string; client: string | null; createdAt: string; revokedAt: string | null; lastCallAt: string | null; machine: string | null; approvedBy: string | null }[];
  pairings: Pairing[];
}
export interface RepoSummary {
  name: string;
  goal: string;
  openIntents: number;
  activeTokens: number;
  people: string[];
  pendingPairings: number;
  lastActivityAt: string | null;
}
