/**
 * The `clean-clone` kind: the suite re-run in a fresh clone with the task's change committed
 * into it, no seat. A red suite there fails the attempt (`clean-clone-failed`, the result in the
 * next prompts); a check that could not run blocks (`clean-clone-not-run`). The result is
 * written under `clean_clone` (the workspace's default name when the stage names none).
 */
import { CLEAN_CLONE_RESULT_FILE } from "../../../workspace/index.js";
import { type StageKind, type StageOutcome, type StageStep } from "../kind.js";
import { cleanCloneStep } from "../steps.js";

/** Options of a seat stage that mean nothing for a clean-clone check. */
const NOT_FOR_A_CLEAN_CLONE = ["gate", "verdict", "artifacts", "on_fail"] as const;

async function cleanClone(step: StageStep): Promise<StageOutcome> {
  return (await cleanCloneStep(step, step.stage.cleanClone ?? CLEAN_CLONE_RESULT_FILE)) ?? { passed: true };
}

export const cleanCloneKind: StageKind = {
  name: "clean-clone",
  phase: "task",
  seated: false,
  artifacts: [],
  normalize: (stage) => ({ ...stage, clean_clone: stage.clean_clone ?? CLEAN_CLONE_RESULT_FILE }),
  validate: (stage) => {
    const option = NOT_FOR_A_CLEAN_CLONE.find((key) => stage[key] !== undefined);
    if (option) return { field: option, problem: `is not an option of a clean-clone stage ('${stage.id}' runs the suite in a fresh clone, no seat)` };
    if (stage.scope === "story")
      return {
        field: "scope",
        problem: `of clean-clone stage '${stage.id}' cannot be 'story': a planned story's merged branch always gets the story-level clean-clone check`,
      };
    return undefined;
  },
  checks: (stage) => [{ stage: stage.id, kind: "clean-clone" }],
  run: (step) => cleanClone(step),
};
