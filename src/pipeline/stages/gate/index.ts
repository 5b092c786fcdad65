/**
 * The `gate` kind: a deterministic check without a seat, the repository's test suite in the
 * task's provisioned worktree. With a fix ladder (`on_fail.fix`), a red suite goes to the fixer
 * seat with the suite's output and the gate runs again, up to `max_rounds`, before the attempt
 * fails. A suite that is red on the base the same way blocks as `baseline-red`, outside the ladder.
 */
import { withFixLadder } from "../fix-ladder.js";
import { type StageKind, type StageOutcome, type StageStep } from "../kind.js";
import { suiteGateStep } from "../steps.js";

/** Options of a seat stage that mean nothing for a gate: it runs no seat, so it leaves no artifacts. */
const NOT_FOR_A_GATE = ["verdict", "clean_clone", "artifacts"] as const;

async function gate(step: StageStep): Promise<StageOutcome> {
  return (await suiteGateStep(step)) ?? { passed: true };
}

export const gateKind: StageKind = {
  name: "gate",
  phase: "task",
  seated: false,
  artifacts: [],
  normalize: (stage) => ({ ...stage, gate: "suite" }),
  validate: (stage) => {
    const option = NOT_FOR_A_GATE.find((key) => stage[key] !== undefined);
    if (option) return { field: option, problem: `is not an option of a gate stage ('${stage.id}' runs the test suite, no seat)` };
    return undefined;
  },
  checks: (stage) => [{ stage: stage.id, kind: "gate" }],
  run: (step) => withFixLadder(step, "suite-failed", () => gate(step)),
};
