/**
 * The `review` kind: a reviewer seat looks at the task's work and writes `review.json`
 * (`{"verdict", "findings"}`, the verdict schema). On `fail`, with a fix ladder
 * (`on_fail.fix`), a fixer seat gets the findings and the reviewer looks again, up to
 * `max_rounds`, before the review counts as a failed attempt.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { seatLaunch } from "../../task.js";
import { withFixLadder } from "../fix-ladder.js";
import type { StageKind, StageOutcome, StageStep } from "../kind.js";
import { launchStageSeat } from "../seat-launch.js";
import { roundDir, verdictStep } from "../steps.js";

/** The artifact a reviewer must leave. */
export const REVIEW_ARTIFACT = "review.json";

/** Options of a seat stage that a review does not take: it is judged by its own review.json. */
const NOT_FOR_A_REVIEW = ["gate", "verdict", "clean_clone"] as const;

/** One look of the reviewer; `round` > 0 is a look again after a fixer round (its own folder). */
async function review(step: StageStep, round: number): Promise<StageOutcome> {
  const dir = roundDir(step, round);
  const artifactDir = join(dir, "artifacts");
  mkdirSync(artifactDir, { recursive: true });
  const seat = step.stage.seat !== undefined ? seatLaunch(step.task.config, step.stage.seat) : null;
  // A disabled reviewer seat skips the review, as a disabled seat skips its stage.
  if (!seat) return { passed: true };
  const seatFailure = await launchStageSeat(step, seat, dir, artifactDir);
  if (seatFailure) return seatFailure;
  return (await verdictStep(step, artifactDir, REVIEW_ARTIFACT)) ?? { passed: true };
}

export const reviewKind: StageKind = {
  name: "review",
  phase: "task",
  seated: true,
  artifacts: [{ name: REVIEW_ARTIFACT, schema: "verdict" }],
  normalize: (stage) => ({ ...stage, verdict: REVIEW_ARTIFACT }),
  validate: (stage) => {
    const option = NOT_FOR_A_REVIEW.find((key) => stage[key] !== undefined);
    if (option)
      return {
        field: option,
        problem: `is not an option of a review stage ('${stage.id}' is judged by the ${REVIEW_ARTIFACT} its reviewer writes; a suite gate or clean-clone check is a stage of its own)`,
      };
    return undefined;
  },
  checks: (stage) => [{ stage: stage.id, kind: "review" }],
  run: (step) => withFixLadder(step, "verdict-fail", (round) => review(step, round)),
};
