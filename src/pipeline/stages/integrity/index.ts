/**
 * The `integrity` kind: does the suite still test what it tested? No seat. Compares the task's
 * work with its base (the test-integrity gate, `src/integrity`) and the tests the suite
 * reported running on the base (the baseline) and in this attempt's clean clone. A finding
 * nobody accepted fails the attempt (`test-integrity`, the findings in the next prompts); at
 * the attempt ceiling the task blocks as `test-integrity`.
 */
import type { StageKind } from "../kind.js";
import { integrityStep } from "./step.js";

export { judgeMerge, storyIntegrityBase, type MergeToJudge } from "./merge-gate.js";

/** Options of a seat stage that mean nothing for the integrity gate. */
const NOT_FOR_INTEGRITY = ["gate", "verdict", "clean_clone", "artifacts", "on_fail"] as const;

export const integrityKind: StageKind = {
  name: "integrity",
  phase: "task",
  seated: false,
  artifacts: [],
  validate: (stage) => {
    const option = NOT_FOR_INTEGRITY.find((key) => stage[key] !== undefined);
    if (option) return { field: option, problem: `is not an option of an integrity stage ('${stage.id}' compares the change with its base, no seat)` };
    return undefined;
  },
  checks: (stage) => [{ stage: stage.id, kind: "integrity" }],
  run: (step) => integrityStep(step),
};
