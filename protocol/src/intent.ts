import { z } from "zod";
import { BOUNDS } from "./bounds.js";

/** A short, agent-chosen identifier: an output, a component, a capability. */
export const Name = z
  .string()
  .min(1)
  .max(BOUNDS.nameChars)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/, "use letters, digits and . _ : / @ + -");
const Names = z.array(Name).max(BOUNDS.nameItems);
const Steps = z.array(z.string().min(1).max(BOUNDS.stepChars)).max(BOUNDS.planItems);

export const IntentState = z.enum(["planned", "working", "blocked", "completed", "abandoned"]);
export type IntentState = z.infer<typeof IntentState>;

/**
 * The compact structured intent an agent authors itself. Cohent stores it
 * as JSON and never summarizes it with a model.
 */
export const IntentRecord = z
  .strictObject({
    objective: z.string().trim().min(1).max(BOUNDS.objectiveChars),
    plan: Steps.default([]),
    components: Names.default([]),
    dependsOn: Names.default([]),
    deferred: Names.default([]),
    outputs: Names.default([]),
    blockers: Steps.default([]),
    requires: Names.default([]),
    capabilities: Names.default([]),
    state: IntentState.default("planned"),
  })
  .superRefine((record, ctx) => {
    const size = JSON.stringify(record).length;
    if (size > BOUNDS.intentChars) {
      ctx.addIssue({
        code: "custom",
        message: `intent is ${size} characters; at most ${BOUNDS.intentChars}`,
      });
    }
  });
export type IntentRecord = z.infer<typeof IntentRecord>;

/** Usage an integration reports about itself; never estimated by Cohent. */
export const Usage = z.strictObject({
  source: z.string().min(1).max(BOUNDS.identityChars),
  inputTokens: z.number().int().nonnegative().max(1e12).optional(),
  outputTokens: z.number().int().nonnegative().max(1e12).optional(),
  costUsd: z.number().nonnegative().max(1e9).optional(),
});
export type Usage = z.infer<typeof Usage>;
