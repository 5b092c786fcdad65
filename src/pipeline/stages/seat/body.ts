/** One pass of a seat stage: the suite gate when declared, the seat with its verdict, then the clean-clone check when declared. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { seatLaunch } from "../../task.js";
import type { StageOutcome, StageStep } from "../kind.js";
import { launchStageSeat } from "../seat-launch.js";
import { cleanCloneStep, suiteGateStep, verdictStep } from "../steps.js";

/** Runs the seat stage once, in order: gate, seat and verdict, clean clone; the first failure ends it. */
export async function seatStageBody(step: StageStep): Promise<StageOutcome> {
  const { task, stage } = step;
  // Without a test command the seat's suite steps are left out (preflight refuses such a stage).
  const suite = task.config.test.command !== undefined;
  const stageDir = task.layout.stageDir(step.attempt, stage.id);
  const artifactDir = join(stageDir, "artifacts");
  mkdirSync(artifactDir, { recursive: true });
  if (stage.gate === "suite" && suite) {
    const gateFailure = await suiteGateStep(step);
    if (gateFailure) return gateFailure;
  }
  const seat = stage.seat !== undefined ? seatLaunch(task.config, stage.seat) : null;
  if (seat) {
    const seatFailure = await launchStageSeat(step, seat, stageDir, artifactDir);
    if (seatFailure) return seatFailure;
    if (stage.verdict !== undefined) {
      const verdictFailure = await verdictStep(step, artifactDir, stage.verdict);
      if (verdictFailure) return verdictFailure;
    }
  }
  if (stage.cleanClone !== undefined && suite) {
    const cleanFailure = await cleanCloneStep(step, stage.cleanClone);
    if (cleanFailure) return cleanFailure;
  }
  return { passed: true };
}
