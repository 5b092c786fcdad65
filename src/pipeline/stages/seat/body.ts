/**
 * One pass of a seat stage: the suite gate when declared, the seat with its verdict, then the
 * clean-clone check when declared. A stage that declares both a suite gate and a clean clone runs
 * the suite once, in the clean clone, before its seat: that run is the gate the seat judges.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { seatLaunch } from "../../task.js";
import type { StageOutcome, StageStep } from "../kind.js";
import { launchStageSeat } from "../seat-launch.js";
import { cleanCloneGateStep, cleanCloneStep, suiteGateStep, verdictStep } from "../steps.js";

/** Runs the seat stage once, in order: gate (the clean clone when declared), seat and verdict, clean clone; the first failure ends it. */
export async function seatStageBody(step: StageStep): Promise<StageOutcome> {
  const { task, stage } = step;
  // Without a test command the seat's suite steps are left out (preflight refuses such a stage).
  const suite = task.config.test.command !== undefined;
  const stageDir = task.layout.stageDir(step.attempt, stage.id);
  const artifactDir = join(stageDir, "artifacts");
  mkdirSync(artifactDir, { recursive: true });
  // With both declared, the clean clone is the gate: the suite runs once, where the commit will exist.
  const cleanGate = stage.gate === "suite" ? stage.cleanClone : undefined;
  if (stage.gate === "suite" && suite) {
    const gateFailure = cleanGate !== undefined ? await cleanCloneGateStep(step, cleanGate) : await suiteGateStep(step);
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
  if (stage.cleanClone !== undefined && suite && cleanGate === undefined) {
    const cleanFailure = await cleanCloneStep(step, stage.cleanClone);
    if (cleanFailure) return cleanFailure;
  }
  return { passed: true };
}
