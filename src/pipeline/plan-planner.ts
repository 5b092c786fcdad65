/**
 * The planner step of a story that brings no plan of its own: the workflow's plan-phase stage
 * (a `planner` stage) runs in its own provisioned worktree of the story branch, as task
 * `<stage id>` in wave 0, through the attempt ladder like any stage; the plan it wrote is what
 * the story's tasks then run as. Nothing it changes in its worktree is kept.
 */
import { runAttempts } from "./attempts.js";
import type { Plan } from "./plan.js";
import type { StoryRun } from "./story-run.js";
import { inTaskSlot, type SlotFailure } from "./task-slot.js";
import type { Stage } from "./workflow-types.js";

export type PlannerResult = { passed: true; plan: Plan } | SlotFailure;

/** Runs the plan-phase `stages` on `base` (the story branch's tip) and returns the plan they produced. */
export async function runPlanner(run: StoryRun, stages: readonly Stage[], base: string): Promise<PlannerResult> {
  const first = stages[0];
  if (!first) throw new Error("runPlanner needs a plan-phase stage");
  const taskId = first.id;
  await run.context.sink.emit({
    kind: "task.planned",
    taskId,
    title: "Plan the story",
    wave: 0,
    files: [],
    blockedBy: [],
    stages: stages.map((stage) => stage.id),
  });
  let plan: Plan | undefined;
  const result = await inTaskSlot(run, { taskId, worktreeId: `${run.runId}-${taskId}`, base, wave: 0, attempt: 1 }, async (task) => {
    const attempts = await runAttempts(task, { stages, retryStage: taskId });
    if (!attempts.passed) return { passed: false as const, attempt: attempts.attempt, failureClass: attempts.failureClass, reason: attempts.reason };
    plan = task.producedPlan;
    return { passed: true as const, attempt: attempts.attempt };
  });
  if (!result.passed) return result;
  if (!plan) return { passed: false, failureClass: "internal-error", reason: `stage '${taskId}' passed without producing a plan` };
  return { passed: true, plan };
}
