import type { IntentRecord } from "@cohent/protocol";

/**
 * The resolver index: which folded names of a record are stored, and which a
 * caller's record looks up, so a resolve loads only the peers that can match
 * a rule. Every rule matches a peer's outputs, capabilities or components
 * (resolver.ts); dependsOn, deferred and requires are only the caller's side.
 */
export type NameKind = "output" | "capability" | "component";

/** The same folding as the resolver's comparisons. */
export const foldName = (name: string) => name.toLowerCase();

const folded = (names: readonly string[]) => [...new Set(names.map(foldName))];

/**
 * The rows an intent's record puts in the index, once per record object (the store shares one object per
 * record text: store/rows recordOf); a full poll looks up every active peer's. Shared: read-only.
 */
const indexed = new WeakMap<IntentRecord, readonly { kind: NameKind; name: string }[]>();
export function indexNames(record: IntentRecord): readonly { kind: NameKind; name: string }[] {
  let rows = indexed.get(record);
  if (!rows)
    indexed.set(
      record,
      (rows = [
        ...folded(record.outputs).map((name) => ({ kind: "output" as const, name })),
        ...folded(record.capabilities).map((name) => ({ kind: "capability" as const, name })),
        ...folded(record.components).map((name) => ({ kind: "component" as const, name })),
      ]),
    );
  return rows;
}

export interface NameLookup {
  /** Active peers: outputs I wait on, duplicate or deferred; capabilities I lack; components I share. */
  active: { kind: NameKind; names: string[] }[];
  /** Completed peers: outputs I depend on. */
  completed: string[];
}

/** The names a caller's record looks up, by kind; empty kinds are left out. */
export function lookupOf(record: IntentRecord): NameLookup {
  const mine = new Set(record.capabilities.map(foldName));
  const active = [
    { kind: "output" as const, names: folded([...record.dependsOn, ...record.outputs, ...record.deferred]) },
    { kind: "capability" as const, names: folded(record.requires).filter((c) => !mine.has(c)) },
    { kind: "component" as const, names: folded(record.components) },
  ].filter((k) => k.names.length > 0);
  return { active, completed: folded(record.dependsOn) };
}
