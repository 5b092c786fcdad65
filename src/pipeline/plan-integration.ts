/** The story's integration step after the last wave: the story-level clean-clone check on the merged branch, then the story-level stages. */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { CLEAN_CLONE_RESULT_FILE, WorkspaceProvisionError, type TaskWorktree } from "../workspace/index.js";
import { runAttempts } from "./attempts.js";
import { runCleanClone } from "./checks.js";
import { commitWorktree, storyCommitMessage } from "./commit.js";
import type { FailureClass } from "./events.js";
import { failureClassOf } from "./failure-class.js";
import { openTaskWorktree, taskRunOf, type StoryRun } from "./plan-task.js";
import { INTEGRATION_CLEAN_CLONE, INTEGRATION_TASK } from "./snapshot.js";
import { ensureProvisioned, type TaskRun } from "./task.js";

export type IntegrationResult = { passed: true; commit: string; worktree: string } | { passed: false; failureClass: FailureClass; reason: string };

/** Runs the integration step in a fresh worktree of the merged story branch; its commit goes on top of `tip`. */
export async function runIntegration(run: StoryRun, tip: string): Promise<IntegrationResult> {
  const { args, sink, deps } = run;
  const taskId = INTEGRATION_TASK;
  const started = performance.now();
  await sink.emit({ kind: "task.started", taskId, wave: 0, attempt: 1 });
  let worktree: TaskWorktree | undefined;
  let result: IntegrationResult;
  try {
    worktree = await openTaskWorktree(run, taskId, `${run.runId}-${taskId}`, tip);
    const task = taskRunOf(run, taskId, worktree);
    await ensureProvisioned(task, "worktree");
    result = await integrate(run, task, worktree);
  } catch (error) {
    if (error instanceof WorkspaceProvisionError) {
      await sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
      result = { passed: false, failureClass: "workspace-provision-failed", reason: `provisioning the merged branch's worktree failed (\`${error.cmd ?? "(none)"}\`)` };
    } else {
      result = { passed: false, failureClass: args.signal?.aborted ? "interrupted" : failureClassOf(error), reason: error instanceof Error ? error.message : String(error) };
    }
  } finally {
    if (worktree) {
      try {
        await deps.removeTaskWorktree(args.repoDir, worktree.path);
      } catch (error) {
        appendFileSync(join(run.layout.logs, "coordinator.log"), `worktree removal of the integration step failed: ${String(error)}\n`);
      }
    }
  }
  const durationMs = Math.round(performance.now() - started);
  await sink.emit({
    kind: "task.finished",
    taskId,
    outcome: result.passed ? "completed" : "blocked",
    attempt: 1,
    durationMs,
    ...(result.passed ? { commit: result.commit } : { failureClass: result.failureClass, detail: result.reason }),
  });
  return result;
}

async function integrate(run: StoryRun, task: TaskRun, worktree: TaskWorktree): Promise<IntegrationResult> {
  if (run.testCommand !== undefined) {
    const failure = await storyCleanClone(run, task, run.testCommand);
    if (failure) return failure;
  }
  if (run.storyStages.length > 0) {
    const first = run.storyStages[0]?.id ?? "";
    const attempts = await runAttempts(task, { stages: run.storyStages, retryStage: first, testCommand: run.testCommand });
    if (!attempts.passed) return { passed: false, failureClass: attempts.failureClass, reason: attempts.reason };
  }
  const commit = await commitWorktree(worktree.path, storyCommitMessage(run.args.story), { stage: true });
  return { passed: true, commit, worktree: worktree.path };
}

/** The clean-clone check of the merged branch, as stage `clean-clone` of the integration step. */
async function storyCleanClone(run: StoryRun, task: TaskRun, command: string): Promise<IntegrationResult | undefined> {
  const stage = INTEGRATION_CLEAN_CLONE;
  mkdirSync(task.layout.attemptDir(1), { recursive: true });
  await run.sink.emit({ kind: "stage.started", taskId: task.taskId, stage, attempt: 1 });
  const started = performance.now();
  // The result file is named as the workflow's clean-clone stage names it.
  const artifact = run.args.workflow.stages.find((candidate) => candidate.cleanClone !== undefined)?.cleanClone ?? CLEAN_CLONE_RESULT_FILE;
  const record = await runCleanClone(task, { id: stage }, 1, artifact, command);
  const failure: IntegrationResult | undefined = !record.ran
    ? { passed: false, failureClass: "clean-clone-not-run", reason: `the clean-clone check of the merged branch could not run: ${record.reason ?? "no reason given"}` }
    : record.exitCode !== 0
      ? { passed: false, failureClass: "clean-clone-failed", reason: `the tasks passed on their own but the suite ${record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`} in a fresh clone of the merged story branch` }
      : undefined;
  await run.sink.emit({
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
