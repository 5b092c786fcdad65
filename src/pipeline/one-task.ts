/**
 * A story without a plan is a plan of one task: `task-<run>`, every stage of the workflow, in
 * the same slot, attempts, provisioning and baseline as a planned story's tasks. One task has
 * nothing to merge, so its worktree checks out the story branch itself and its commit (the
 * work, or the work so far when it blocks) lands there directly, as the one commit of the run.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { taskWorktreePath } from "../workspace/index.js";
import { commitWorktree, storyCommitMessage } from "./commit.js";
import { attemptTask } from "./plan-task.js";
import type { StoryRun } from "./story-run.js";
import { inTaskSlot, type Slot, type SlotFailure, type SlotOutcome } from "./task-slot.js";
import type { TaskRun } from "./task.js";
import type { StoryOutcome } from "./types.js";

/** The id of the one task of a story without a plan. */
export function oneTaskId(runId: string): string {
  return `task-${runId}`;
}

type OneTaskResult = { passed: true; attempt: number; commit: string } | SlotFailure;

/** Runs the story's one task on its branch and ends the story with it. */
export async function runOneTask(run: StoryRun): Promise<StoryOutcome> {
  const { args, context } = run;
  const taskId = oneTaskId(run.runId);
  await context.sink.emit({
    kind: "task.planned",
    taskId,
    title: args.story.title,
    wave: 1,
    files: [],
    blockedBy: [],
    stages: run.taskStages.map((stage) => stage.id),
  });
  const slot: Slot<OneTaskResult> = {
    taskId,
    worktreeId: taskId,
    base: args.baseRef,
    onStoryBranch: true,
    wave: 1,
    attempt: 1,
    baseline: run.taskStages,
    land: (task: TaskRun, result: OneTaskResult) => landBlocked(run, task, result),
  };
  const result = await inTaskSlot(run, slot, async (task): Promise<OneTaskResult> => {
    const attempts = await attemptTask(run, task, { attempt: 1 });
    if (!attempts.passed) return { passed: false, attempt: attempts.attempt, failureClass: attempts.failureClass, reason: attempts.reason };
    const commit = await commitWorktree(task.worktree.path, storyCommitMessage(args.story), { stage: true });
    return { passed: true, attempt: attempts.attempt, commit };
  });
  const ended = { branch: args.branch, runDir: run.layout.root, worktree: taskWorktreePath(args.harnessHome, args.story.id, taskId) };
  if (result.passed) {
    await context.sink.emit({ kind: "story.completed", taskId, branch: args.branch, commit: result.commit });
    return { status: "completed", ...ended, commit: result.commit };
  }
  const { failureClass, reason: detail, commit } = result;
  await context.sink.emit({ kind: "story.blocked", taskId, failureClass, detail, ...(commit ? { branch: args.branch, commit } : {}) });
  return { status: "blocked", failureClass, detail, ...ended, ...(commit ? { commit } : {}) };
}

/** A blocked task's work so far, committed on the story branch; with no agent launched, an empty commit records the outcome. */
async function landBlocked<R extends SlotOutcome>(run: StoryRun, task: TaskRun, result: R | SlotFailure): Promise<R | SlotFailure> {
  if (result.passed) return result;
  try {
    const commit = await commitWorktree(task.worktree.path, storyCommitMessage(task.story, result.failureClass, result.reason), {
      stage: task.seatsLaunched > 0,
    });
    return { ...result, commit };
  } catch (error) {
    appendFileSync(join(run.layout.logs, "coordinator.log"), `commit of blocked work failed: ${String(error)}\n`);
    return result;
  }
}
