/** One task of a plan in its slot: a fresh worktree from the wave's base, provisioning, the baseline, the per-task stages, commit and scope. */
import { runAttempts, type AttemptsOptions, type AttemptsResult } from "./attempts.js";
import type { CheckFailure } from "./check-results.js";
import { commitWorktree } from "./commit.js";
import type { RetryEvidence } from "./context.js";
import type { FailureClass } from "./events.js";
import { matchesAny } from "./globs.js";
import { changedFiles } from "./merge.js";
import type { PlanTask } from "./plan.js";
import { inTaskSlot } from "./task-slot.js";
import type { StoryRun } from "./story-run.js";
import type { TaskRun } from "./task.js";

export type PlanTaskResult =
  { passed: true; attempt: number; commit: string; changed: string[] } | { passed: false; attempt: number; failureClass: FailureClass; reason: string };

export interface PlanTaskInput {
  task: PlanTask;
  attempt: number;
  retry?: RetryEvidence;
  /** The story branch's commit the task's worktree starts from. */
  base: string;
  /** What the earlier waves did, for the prompts. */
  earlier: string;
}

/** The message of a task's own commit (merged onto the story branch afterwards). */
export function taskCommitMessage(storyId: string, task: Pick<PlanTask, "id" | "title">, attempt: number): string {
  return `Task ${task.id}: ${task.title.replace(/\s+/g, " ").trim()}`.slice(0, 72) + `\n\nAttempt ${attempt}, by story-harness.\n\nStory: ${storyId}\n`;
}

/**
 * The stages of a task in its slot, the same for every task of a story: its attempts. The slot
 * started the baseline (the suite once on the task's base, so that a test command that cannot
 * start is the environment's and a red base is told from the task's own failure) beside them.
 */
export async function attemptTask(
  run: StoryRun,
  task: TaskRun,
  options: Omit<AttemptsOptions, "stages" | "retryStage" | "startAttempt"> & { attempt: number },
): Promise<AttemptsResult> {
  const { attempt, ...rest } = options;
  return runAttempts(task, { ...rest, stages: run.taskStages, retryStage: run.taskRetryStage, startAttempt: attempt });
}

/** Runs one task from its slot's start to its end; never throws for the task's own failures. */
export async function runPlanTask(run: StoryRun, input: PlanTaskInput): Promise<PlanTaskResult> {
  const { args } = run;
  const { task } = input;
  const planContext = { id: task.id, title: task.title, description: task.description, files: task.files, earlier: input.earlier };
  const slot = {
    taskId: task.id,
    worktreeId: `${run.runId}-${task.id}-${input.attempt}`,
    base: input.base,
    wave: task.wave,
    attempt: input.attempt,
    planContext,
    baseline: run.taskStages,
  };
  const result = await inTaskSlot(run, slot, async (taskRun): Promise<PlanTaskResult> => {
    const own = taskRun.worktree;
    let commit = "";
    let changed: string[] = [];
    const accept = async (attempt: number): Promise<CheckFailure | undefined> => {
      commit = await commitWorktree(own.path, taskCommitMessage(args.story.id, task, attempt), { stage: true });
      changed = await changedFiles(own.path, own.base, commit);
      const outside = changed.filter((path) => !matchesAny(path, task.files));
      if (outside.length === 0) return undefined;
      const more = outside.length > 20 ? ` (and ${outside.length - 20} more)` : "";
      return {
        failureClass: "scope-violation",
        reason: `task '${task.id}' changed files outside its declared files (${task.files.join(", ")}): ${outside.slice(0, 20).join(", ")}${more}`,
      };
    };
    const attempts = await attemptTask(run, taskRun, {
      attempt: input.attempt,
      ...(input.retry ? { retry: input.retry } : {}),
      startAtRetryStage: input.attempt > 1,
      accept,
    });
    return attempts.passed
      ? { passed: true, attempt: attempts.attempt, commit, changed }
      : { passed: false, attempt: attempts.attempt, failureClass: attempts.failureClass, reason: attempts.reason };
  });
  return result.passed ? result : { ...result, attempt: result.attempt ?? input.attempt };
}
