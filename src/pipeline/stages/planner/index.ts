/**
 * The `planner` kind: the first stage of a workflow may be a planner seat that reads the story
 * and the repository and writes `plan.json` (the `harness-plan` schema) into its artifact
 * directory. A story that brings no plan block of its own then runs as that plan. A plan the
 * harness refuses (a cycle, an unknown id, overlapping files in one wave) fails the planner's
 * attempt with the problem named, so the next attempt's prompt carries it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { readArtifact } from "../../checks.js";
import { PlanError } from "../../errors.js";
import { parsePlan, PLAN_FENCE } from "../../plan.js";
import { seatLaunch } from "../../task.js";
import { failed, type StageKind } from "../kind.js";
import { launchStageSeat } from "../seat-launch.js";

/** The artifact a planner must leave. */
export const PLAN_ARTIFACT = "plan.json";

/** Options of a seat stage that mean nothing for a planner. */
const NOT_FOR_A_PLANNER = ["gate", "verdict", "clean_clone", "on_fail", "scope"] as const;

export const plannerKind: StageKind = {
  name: "planner",
  phase: "plan",
  seated: true,
  artifacts: [{ name: PLAN_ARTIFACT, schema: "plan" }],
  validate: (stage, index) => {
    if (index !== 0) return { field: "kind", problem: `makes stage '${stage.id}' a planner, but only a workflow's first stage may plan the story` };
    const option = NOT_FOR_A_PLANNER.find((key) => stage[key] !== undefined);
    if (option) return { field: option, problem: `is not an option of a planner stage ('${stage.id}' plans the story; its tasks run the other stages)` };
    return undefined;
  },
  checks: (stage) => [{ stage: stage.id, kind: "plan" }],
  run: async (step) => {
    const { task, stage, attempt } = step;
    const seatName = stage.seat ?? stage.id;
    const stageDir = task.layout.stageDir(attempt, stage.id);
    const artifactDir = join(stageDir, "artifacts");
    mkdirSync(artifactDir, { recursive: true });
    const seat = seatLaunch(task.config, seatName);
    if (!seat) {
      const reason = `the ${seatName} seat is disabled, so stage '${stage.id}' cannot plan the story: enable the seat, or give the story a \`${PLAN_FENCE}\` block`;
      return failed({ failureClass: "config-invalid", reason }, {}, true);
    }
    const seatFailure = await launchStageSeat(step, seat, stageDir, artifactDir);
    if (seatFailure) return seatFailure;
    try {
      const plan = parsePlan(await readArtifact(join(artifactDir, PLAN_ARTIFACT)), `the ${seatName}'s ${PLAN_ARTIFACT}`);
      const clash = plan.tasks.find((candidate) => candidate.id === task.taskId);
      if (clash) throw new PlanError(`the ${seatName}'s ${PLAN_ARTIFACT}`, "$.tasks", `names a task '${clash.id}', the planner's own id; give it another`);
      task.producedPlan = plan;
    } catch (error) {
      if (!(error instanceof PlanError)) throw error;
      return failed({ failureClass: "artifact-invalid", reason: error.message });
    }
    return { passed: true };
  },
};
