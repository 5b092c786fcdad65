/**
 * Sets up a story's run (concurrency, per-task and story-level stages, task layouts) and runs its
 * tasks: its plan, its planner's, or (a story without a plan) a plan of one task.
 */
import { ensureStoryBranch } from "./merge.js";
import { runOneTask } from "./one-task.js";
import { blockPlan, runPlan } from "./plan-run.js";
import { runPlanner } from "./plan-planner.js";
import type { Plan } from "./plan.js";
import type { StoryRun } from "./story-run.js";
import { taskLayout } from "./run-dir.js";
import { TaskSlots } from "./task-slots.js";
import { stageKind } from "./stages/index.js";
import type { StoryOutcome } from "./types.js";
import { planStages } from "./workflow.js";

/** Tasks at once when neither `--concurrency` nor `plan.concurrency` says. */
export const DEFAULT_PLAN_CONCURRENCY = 2;
/** The runner's limit when it names none. */
export const DEFAULT_TASK_SLOTS = 8;

/**
 * How many tasks a plan asks to run at once: the request (or the configuration, or 2), never
 * above the runner's limit, at least 1. How many do run at once also depends on the runner's
 * free slots (`StoryRun.slots`).
 */
export function planConcurrency(requested: number | undefined, configured: number | undefined, slots: number | undefined): number {
  const wanted = requested ?? configured ?? DEFAULT_PLAN_CONCURRENCY;
  return Math.max(1, Math.min(wanted, slots ?? DEFAULT_TASK_SLOTS));
}

/** What the coordinator sets up before a story's tasks: the run's id, context, directory and sink. */
export type StoryRunBase = Pick<StoryRun, "args" | "runId" | "context" | "layout">;

function storyRunOf(base: StoryRunBase, stages: Pick<StoryRun, "taskStages" | "taskRetryStage" | "storyStages" | "taskLayout">): StoryRun {
  const { args } = base;
  return {
    ...base,
    ...stages,
    concurrency: planConcurrency(args.concurrency, args.config.plan.concurrency, args.taskSlots),
    // The runner's shared slots (its job holds one for the story); alone (`harness run`), the slots beyond the story's own.
    slots: args.slots ?? new TaskSlots(Math.max(0, (args.taskSlots ?? DEFAULT_TASK_SLOTS) - 1)),
  };
}

/**
 * Runs a story without a plan as a plan of one task: every stage of the workflow in that task,
 * its records in the run directory itself.
 */
export function runUnplannedStory(base: StoryRunBase): Promise<StoryOutcome> {
  const { workflow } = base.args;
  return runOneTask(storyRunOf(base, { taskStages: workflow.stages, taskRetryStage: workflow.retryStage, storyStages: [], taskLayout: () => base.layout }));
}

/**
 * Runs `plan`, or (without one) the workflow's planner first and then the plan it wrote: the
 * workflow's stages with `scope: "story"` run once on the merged branch, the others per task.
 */
export async function runPlannedStory(base: StoryRunBase, plan: Plan | undefined): Promise<StoryOutcome> {
  const { workflow } = base.args;
  const taskStages = workflow.stages.filter((stage) => stage.scope !== "story" && stageKind(stage.kind).phase === "task");
  const storyStages = workflow.stages.filter((stage) => stage.scope === "story");
  const retryStage = taskStages.some((stage) => stage.id === workflow.retryStage) ? workflow.retryStage : (taskStages[0]?.id ?? workflow.retryStage);
  const run = storyRunOf(base, { taskStages, taskRetryStage: retryStage, storyStages, taskLayout: (taskId) => taskLayout(base.layout, taskId) });
  if (plan) return runPlan(run, plan);
  const tip = await ensureStoryBranch(base.args.repoDir, base.args.branch, base.args.baseRef);
  const planners = planStages(workflow);
  const planned = await runPlanner(run, planners, tip);
  if (!planned.passed)
    return blockPlan(
      run,
      tip,
      planned.failureClass,
      planned.reason,
      planners.slice(0, 1).map((stage) => stage.id),
    );
  return runPlan(run, planned.plan);
}
