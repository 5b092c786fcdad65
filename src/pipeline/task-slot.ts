/**
 * A task's slot in a planned story, from start to end: `task.started`, a fresh worktree at the
 * given base, provisioning inside the slot, the caller's work, the worktree removed, and
 * `task.finished`. A failure outside the caller's own ladder (provisioning, the worktree, a
 * stop) is classified here, once, for the plan's tasks, its planner and its integration step.
 */
import { appendFileSync } from "node:fs";
import { join, relative } from "node:path";
import { WorkspaceProvisionError, type TaskWorktree } from "../workspace/index.js";
import type { FailureClass } from "./events.js";
import { failureClassOf } from "../failure/index.js";
import type { StoryRun } from "./story-run.js";
import { ensureProvisioned, type TaskPromptContext, type TaskRun } from "./task.js";

/** How a slot's work ended; `attempt` is the attempt it ended at (the slot's first when absent). */
export type SlotOutcome = { passed: true; attempt?: number; commit?: string } | SlotFailure;
export interface SlotFailure {
  passed: false;
  attempt?: number;
  failureClass: FailureClass;
  reason: string;
}

export interface Slot {
  taskId: string;
  /** Names the worktree's folder (unique per run, task and attempt). */
  worktreeId: string;
  /** The commit the worktree starts from. */
  base: string;
  wave: number;
  attempt: number;
  planContext?: TaskPromptContext;
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

/** Runs `work` in the slot's provisioned worktree; never throws for the task's own failures. */
export async function inTaskSlot<R extends SlotOutcome>(run: StoryRun, slot: Slot, work: (task: TaskRun) => Promise<R>): Promise<R | SlotFailure> {
  const { args, sink } = run;
  const started = performance.now();
  await sink.emit({ kind: "task.started", taskId: slot.taskId, wave: slot.wave, attempt: slot.attempt });
  let worktree: TaskWorktree | undefined;
  let result: R | SlotFailure;
  try {
    worktree = await openTaskWorktree(run, slot.taskId, slot.worktreeId, slot.base);
    const task = taskRunOf(run, slot.taskId, worktree, slot.planContext);
    await ensureProvisioned(task, "worktree");
    result = await work(task);
  } catch (error) {
    result = { passed: false, attempt: slot.attempt, ...(await classifySlotError(run, slot.taskId, error)) };
  } finally {
    if (worktree) {
      try {
        await run.deps.removeTaskWorktree(args.repoDir, worktree.path);
      } catch (error) {
        appendFileSync(join(run.layout.logs, "coordinator.log"), `worktree removal of task ${slot.taskId} failed: ${String(error)}\n`);
      }
    }
  }
  await sink.emit({
    kind: "task.finished",
    taskId: slot.taskId,
    outcome: result.passed ? "completed" : "blocked",
    attempt: result.attempt ?? slot.attempt,
    durationMs: Math.round(performance.now() - started),
    ...(result.passed ? (result.commit !== undefined ? { commit: result.commit } : {}) : { failureClass: result.failureClass, detail: result.reason }),
  });
  return result;
}

/** The class of a failure outside the attempt ladder (provisioning, the worktree, a stop). */
async function classifySlotError(run: StoryRun, taskId: string, error: unknown): Promise<{ failureClass: FailureClass; reason: string }> {
  if (error instanceof WorkspaceProvisionError) {
    await run.sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
    const how = error.exitCode === null ? "did not finish" : `exited ${error.exitCode}`;
    return { failureClass: "workspace-provision-failed", reason: `provisioning \`${error.cmd ?? "(none)"}\` ${how}; log: ${relative(run.layout.root, error.logPath)} in the run directory` };
  }
  if (run.args.signal?.aborted) return { failureClass: "interrupted", reason: "the run was stopped" };
  return { failureClass: failureClassOf(error), reason: error instanceof Error ? error.message : String(error) };
}
