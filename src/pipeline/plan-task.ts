/** One task of a plan in its slot: a fresh worktree from the wave's base, provisioning, the per-task stages, commit and scope. */
import { appendFileSync } from "node:fs";
import { join, relative } from "node:path";
import { WorkspaceProvisionError, type TaskWorktree } from "../workspace/index.js";
import { runAttempts } from "./attempts.js";
import type { CheckFailure } from "./checks.js";
import { commitWorktree } from "./commit.js";
import type { RetryEvidence } from "./context.js";
import type { PipelineDeps } from "./deps.js";
import type { FailureClass } from "./events.js";
import { failureClassOf } from "./failure-class.js";
import { matchesAny } from "./globs.js";
import { changedFiles } from "./merge.js";
import type { PlanTask } from "./plan.js";
import type { RunLayout } from "./run-dir.js";
import type { EventSink } from "./sink.js";
import { ensureProvisioned, type TaskPromptContext, type TaskRun } from "./task.js";
import type { RunStoryArgs } from "./types.js";
import type { Stage } from "./workflow.js";
import type { Sandbox } from "../sandbox/index.js";

/** What every task of one run of a planned story shares. */
export interface StoryRun {
  args: RunStoryArgs;
  runId: string;
  deps: PipelineDeps;
  layout: RunLayout;
  sink: EventSink;
  clock: () => Date;
  maxAttempts: number;
  testCommand: string | undefined;
  agentEnv: string[];
  /** Where repository code runs. */
  sandbox: Sandbox;
  /** Tasks run side by side at most this many at once. */
  concurrency: number;
  /** The workflow's per-task stages and where their failed attempts go back to. */
  taskStages: Stage[];
  taskRetryStage: string;
  /** The workflow's story-level stages, run once on the merged branch. */
  storyStages: Stage[];
  /** The record folder of one task (`tasks/<id>/attempts/<n>/<stage>`). */
  taskLayout(taskId: string): RunLayout;
}

export type PlanTaskResult =
  | { passed: true; attempt: number; commit: string; changed: string[] }
  | { passed: false; attempt: number; failureClass: FailureClass; reason: string };

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
 * A fresh worktree for one task of a planned story, detached at `base` (the story branch as
 * the wave or the integration step found it), journaled as `worktree.created`.
 */
export async function openTaskWorktree(run: StoryRun, taskId: string, worktreeId: string, base: string): Promise<TaskWorktree> {
  const { args } = run;
  const worktree = await run.deps.createTaskWorktree({
    repoDir: args.repoDir,
    harnessHome: args.harnessHome,
    storyId: args.story.id,
    taskId: worktreeId,
    branch: args.branch,
    baseRef: base,
    detach: true,
  });
  await run.sink.emit({ kind: "worktree.created", taskId, worktree: worktree.path, branch: args.branch, base: worktree.base });
  return worktree;
}

/** What one task of a planned story runs with: the story run's shared collaborators, the task's own id, layout, worktree and prompt context. */
export function taskRunOf(run: StoryRun, taskId: string, worktree: TaskWorktree, planContext?: TaskPromptContext): TaskRun {
  const { args } = run;
  return {
    taskId,
    story: args.story,
    config: args.config,
    workflow: args.workflow,
    maxAttempts: run.maxAttempts,
    layout: run.taskLayout(taskId),
    worktree,
    deps: run.deps,
    sink: run.sink,
    harnessHome: args.harnessHome,
    agentEnv: run.agentEnv,
    sandbox: run.sandbox,
    clock: run.clock,
    seatsLaunched: 0,
    ...(planContext ? { planContext } : {}),
    ...(args.signal ? { signal: args.signal } : {}),
  };
}

/** Runs one task from its slot's start to its end; never throws for the task's own failures. */
export async function runPlanTask(run: StoryRun, input: PlanTaskInput): Promise<PlanTaskResult> {
  const { args, sink, deps } = run;
  const { task } = input;
  const started = performance.now();
  await sink.emit({ kind: "task.started", taskId: task.id, wave: task.wave, attempt: input.attempt });
  let worktree: TaskWorktree | undefined;
  let result: PlanTaskResult;
  try {
    worktree = await openTaskWorktree(run, task.id, `${run.runId}-${task.id}-${input.attempt}`, input.base);
    const taskRun = taskRunOf(run, task.id, worktree, { id: task.id, title: task.title, description: task.description, files: task.files, earlier: input.earlier });
    await ensureProvisioned(taskRun, "worktree");
    const own = worktree;
    let commit = "";
    let changed: string[] = [];
    const accept = async (attempt: number): Promise<CheckFailure | undefined> => {
      commit = await commitWorktree(own.path, taskCommitMessage(args.story.id, task, attempt), { stage: true });
      changed = await changedFiles(own.path, own.base, commit);
      const outside = changed.filter((path) => !matchesAny(path, task.files));
      if (outside.length === 0) return undefined;
      const more = outside.length > 20 ? ` (and ${outside.length - 20} more)` : "";
      return { failureClass: "scope-violation", reason: `task '${task.id}' changed files outside its declared files (${task.files.join(", ")}): ${outside.slice(0, 20).join(", ")}${more}` };
    };
    const attempts = await runAttempts(taskRun, {
      stages: run.taskStages,
      retryStage: run.taskRetryStage,
      testCommand: run.testCommand,
      startAttempt: input.attempt,
      ...(input.retry ? { retry: input.retry } : {}),
      startAtRetryStage: input.attempt > 1,
      accept,
    });
    result = attempts.passed ? { passed: true, attempt: attempts.attempt, commit, changed } : { passed: false, attempt: attempts.attempt, failureClass: attempts.failureClass, reason: attempts.reason };
  } catch (error) {
    result = { passed: false, attempt: input.attempt, ...(await classify(run, task.id, error)) };
  } finally {
    if (worktree) {
      try {
        await deps.removeTaskWorktree(args.repoDir, worktree.path);
      } catch (error) {
        appendFileSync(join(run.layout.logs, "coordinator.log"), `worktree removal of task ${task.id} failed: ${String(error)}\n`);
      }
    }
  }
  const durationMs = Math.round(performance.now() - started);
  await sink.emit({
    kind: "task.finished",
    taskId: task.id,
    outcome: result.passed ? "completed" : "blocked",
    attempt: result.attempt,
    durationMs,
    ...(result.passed ? { commit: result.commit } : { failureClass: result.failureClass, detail: result.reason }),
  });
  return result;
}

/** The class of a failure outside the attempt ladder (provisioning, the worktree, a stop). */
async function classify(run: StoryRun, taskId: string, error: unknown): Promise<{ failureClass: FailureClass; reason: string }> {
  if (error instanceof WorkspaceProvisionError) {
    await run.sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
    const how = error.exitCode === null ? "did not finish" : `exited ${error.exitCode}`;
    return { failureClass: "workspace-provision-failed", reason: `provisioning \`${error.cmd ?? "(none)"}\` ${how}; log: ${relative(run.layout.root, error.logPath)} in the run directory` };
  }
  if (run.args.signal?.aborted) return { failureClass: "interrupted", reason: "the run was stopped" };
  return { failureClass: failureClassOf(error), reason: error instanceof Error ? error.message : String(error) };
}
