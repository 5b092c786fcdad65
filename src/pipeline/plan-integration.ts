/**
 * The story's integration step after the last wave: the story-level clean-clone check on the
 * merged branch, then the story-level stages (the documenter) followed by the test-integrity
 * gate in one ladder. Every task's merge was judged already (plan-run.ts); what the story-level
 * seats change after that is judged here, and a finding goes back to them.
 */
import { mkdirSync } from "node:fs";
import { CLEAN_CLONE_RESULT_FILE, cleanClonePassed, type TaskWorktree } from "../workspace/index.js";
import { runAttempts } from "./attempts.js";
import { runCleanClone } from "./checks.js";
import { commitWorktree, storyCommitMessage } from "./commit.js";
import type { FailureClass } from "./events.js";
import type { StoryRun } from "./story-run.js";
import { INTEGRATION_CLEAN_CLONE, INTEGRATION_TASK } from "./snapshot.js";
import { inTaskSlot } from "./task-slot.js";
import type { TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";

export type IntegrationResult = { passed: true; commit: string; worktree: string } | { passed: false; failureClass: FailureClass; reason: string };

/** Runs the integration step in a fresh worktree of the merged story branch; its commit goes on top of `tip`. */
export async function runIntegration(run: StoryRun, tip: string): Promise<IntegrationResult> {
  const taskId = INTEGRATION_TASK;
  const result = await inTaskSlot(run, { taskId, worktreeId: `${run.runId}-${taskId}`, base: tip, wave: 0, attempt: 1 }, (task) =>
    integrate(run, task, task.worktree),
  );
  return result.passed ? result : { passed: false, failureClass: result.failureClass, reason: result.reason };
}

async function integrate(run: StoryRun, task: TaskRun, worktree: TaskWorktree): Promise<IntegrationResult> {
  const testCommand = run.args.config.test.command;
  if (testCommand !== undefined) {
    const failure = await storyCleanClone(run, task, testCommand);
    if (failure) return failure;
  }
  const stages = integrationStages(run);
  if (stages.length > 0) {
    const first = stages[0]?.id ?? "";
    const attempts = await runAttempts(task, { stages, retryStage: first });
    if (!attempts.passed) return { passed: false, failureClass: attempts.failureClass, reason: `on the merged story branch, ${attempts.reason}` };
  }
  const commit = await commitWorktree(worktree.path, storyCommitMessage(run.args.story), { stage: true });
  return { passed: true, commit, worktree: worktree.path };
}

/**
 * The stages the integration step runs on the merged branch: the story-level ones, and the
 * workflow's integrity gate after them when any of them may change the work (the merges were
 * judged already; with no story-level seat the gate would judge the last merge again).
 */
export function integrationStages(run: Pick<StoryRun, "storyStages" | "args">): Stage[] {
  const seats = run.storyStages.filter((stage) => stage.kind !== "integrity");
  const integrity = run.args.workflow.stages.find((stage) => stage.kind === "integrity");
  return integrity && seats.length > 0 ? [...seats, integrity] : seats;
}

/** The clean-clone check of the merged branch, as stage `clean-clone` of the integration step. */
async function storyCleanClone(run: StoryRun, task: TaskRun, command: string): Promise<IntegrationResult | undefined> {
  const stage = INTEGRATION_CLEAN_CLONE;
  mkdirSync(task.layout.attemptDir(1), { recursive: true });
  await run.context.sink.emit({ kind: "stage.started", taskId: task.taskId, stage, attempt: 1 });
  const started = performance.now();
  // The result file is named as the workflow's clean-clone stage names it.
  const artifact = run.args.workflow.stages.find((candidate) => candidate.cleanClone !== undefined)?.cleanClone ?? CLEAN_CLONE_RESULT_FILE;
  const record = await runCleanClone(task, { id: stage }, 1, artifact, command);
  const failure: IntegrationResult | undefined = !record.ran
    ? {
        passed: false,
        failureClass: "clean-clone-not-run",
        reason: `the clean-clone check of the merged branch could not run: ${record.reason ?? "no reason given"}`,
      }
    : !cleanClonePassed(record)
      ? {
          passed: false,
          failureClass: "clean-clone-failed",
          reason: `the tasks passed on their own but the suite ${record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`} in a fresh clone of the merged story branch`,
        }
      : undefined;
  await run.context.sink.emit({
    kind: "stage.finished",
    taskId: task.taskId,
    stage,
    attempt: 1,
    outcome: failure ? "failed" : "passed",
    durationMs: Math.round(performance.now() - started),
    ...(failure && !failure.passed ? { failureClass: failure.failureClass, detail: failure.reason } : {}),
  });
  return failure;
}
