/**
 * A task's slot, from start to end: `task.started`, a fresh worktree, provisioning inside the
 * slot, the caller's work, the worktree removed, and `task.finished`. A failure outside the
 * caller's own ladder (provisioning, the worktree, a stop) is classified here, once, for every
 * task: a plan's tasks, its planner and its integration step, and the one task of a story
 * without a plan.
 */
import { appendFileSync } from "node:fs";
import { join, relative } from "node:path";
import { WorkspaceProvisionError, type TaskWorktree } from "../workspace/index.js";
import { SPARE_STOCK } from "../sandbox/index.js";
import type { FailureClass } from "./events.js";
import { failureClassOf } from "../failure/index.js";
import type { StoryRun } from "./story-run.js";
import { ensureProvisioned, taskRunOf, type TaskPromptContext, type TaskRun } from "./task.js";
import type { BaseCheckout } from "./baseline.js";
import { startBaseline } from "./baseline-pending.js";
import type { Stage } from "./workflow-types.js";

/** How a slot's work ended; `attempt` is the attempt it ended at (the slot's first when absent). */
export type SlotOutcome = { passed: true; attempt?: number; commit?: string } | SlotFailure;
export interface SlotFailure {
  passed: false;
  attempt?: number;
  failureClass: FailureClass;
  reason: string;
  /** The work so far, committed by the slot's `land` before its worktree went. */
  commit?: string;
}

export interface Slot<R extends SlotOutcome = SlotOutcome> {
  taskId: string;
  /** Names the worktree's folder (unique per run, task and attempt). */
  worktreeId: string;
  /** The commit the worktree starts from (a story without a plan: the base its story branch starts from when it does not exist yet). */
  base: string;
  /**
   * True for the one task of a story without a plan: its worktree checks out the story branch
   * itself, so its commits land there with no merge step. Otherwise it is detached at `base`.
   */
  onStoryBranch?: boolean;
  wave: number;
  attempt: number;
  planContext?: TaskPromptContext;
  /** The stages the slot's work runs: when one runs the suite, the baseline starts with the worktree, beside provisioning. */
  baseline?: readonly Stage[];
  /** Runs in the worktree after the work (or its failure), before the worktree is removed; never throws. */
  land?: (task: TaskRun, result: R | SlotFailure) => Promise<R | SlotFailure>;
}

/**
 * A fresh worktree for one task: detached at `base` (the story branch as the wave or the
 * integration step found it), or on the story branch itself (`onStoryBranch`), journaled as
 * `worktree.created`.
 */
export async function openTaskWorktree(run: StoryRun, slot: Pick<Slot, "taskId" | "worktreeId" | "base" | "onStoryBranch">): Promise<TaskWorktree> {
  const { args, context } = run;
  const worktree = await context.deps.createTaskWorktree({
    repoDir: args.repoDir,
    harnessHome: args.harnessHome,
    storyId: args.story.id,
    taskId: slot.worktreeId,
    branch: args.branch,
    baseRef: slot.base,
    ...(slot.onStoryBranch ? {} : { detach: true }),
  });
  await context.sink.emit({ kind: "worktree.created", taskId: slot.taskId, worktree: worktree.path, branch: args.branch, base: worktree.base });
  return worktree;
}

/** A checkout of the base commit for the slot's baseline, beside its worktree, removed once the suite ran there. */
function baseCheckout(run: StoryRun, slot: Pick<Slot, "worktreeId">): BaseCheckout {
  const { args, context } = run;
  return {
    open: async (commit) => {
      const checkout = await context.deps.createTaskWorktree({
        repoDir: args.repoDir,
        harnessHome: args.harnessHome,
        storyId: args.story.id,
        taskId: `${slot.worktreeId}-baseline`,
        branch: args.branch,
        baseRef: commit,
        detach: true,
      });
      return checkout.path;
    },
    close: async (path) => {
      // The suite has run: a checkout that will not go is a leftover to note, not a baseline lost.
      try {
        await context.deps.removeTaskWorktree(args.repoDir, path);
      } catch (error) {
        appendFileSync(join(run.layout.logs, "coordinator.log"), `baseline checkout removal failed: ${String(error)} (task ${slot.worktreeId})\n`);
      }
    },
  };
}

/** Runs `work` in the slot's provisioned worktree; never throws for the task's own failures. */
export async function inTaskSlot<R extends SlotOutcome>(run: StoryRun, slot: Slot<R>, work: (task: TaskRun) => Promise<R>): Promise<R | SlotFailure> {
  const { args, context } = run;
  const started = performance.now();
  await context.sink.emit({ kind: "task.started", taskId: slot.taskId, wave: slot.wave, attempt: slot.attempt });
  let worktree: TaskWorktree | undefined;
  let task: TaskRun | undefined;
  let result: R | SlotFailure;
  try {
    try {
      // The namespaces of the provisioning's step and of the first two seats (back to back: the
      // second's is not made beside the first's start) are made while the worktree opens, off
      // their launch (a provisioning that runs nothing leaves one for a later seat).
      void context.sandbox.warmNetwork(1 + SPARE_STOCK);
      worktree = await openTaskWorktree(run, slot);
      task = taskRunOf(
        context,
        { taskId: slot.taskId, layout: run.taskLayout(slot.taskId), ...(slot.planContext ? { planContext: slot.planContext } : {}) },
        worktree,
      );
      if (slot.baseline) {
        const pending = startBaseline(task, slot.baseline, baseCheckout(run, slot));
        if (pending) task.pendingBaseline = pending;
      }
      await ensureProvisioned(task, "worktree");
      result = await work(task);
    } catch (error) {
      result = { passed: false, attempt: slot.attempt, ...(await classifySlotError(run, slot.taskId, error)) };
    }
    if (task && slot.land) result = await slot.land(task, result);
  } finally {
    // A baseline the work never needed (it ended first) stops, and its checkout goes before the worktree does.
    await task?.pendingBaseline?.stop();
    if (worktree) {
      try {
        await context.deps.removeTaskWorktree(args.repoDir, worktree.path);
      } catch (error) {
        appendFileSync(join(run.layout.logs, "coordinator.log"), `worktree removal failed: ${String(error)} (task ${slot.taskId})\n`);
      }
    }
  }
  await context.sink.emit({
    kind: "task.finished",
    taskId: slot.taskId,
    outcome: result.passed ? "completed" : "blocked",
    attempt: result.attempt ?? slot.attempt,
    durationMs: Math.round(performance.now() - started),
    ...(result.passed ? (result.commit !== undefined ? { commit: result.commit } : {}) : { failureClass: result.failureClass, detail: result.reason }),
  });
  return result;
}

/**
 * The class of a failure outside the attempt ladder (a stop, provisioning, the worktree). A stop
 * request comes first: it ends provisioning as well, and the task is interrupted, not blocked
 * on infrastructure.
 */
async function classifySlotError(run: StoryRun, taskId: string, error: unknown): Promise<{ failureClass: FailureClass; reason: string }> {
  if (run.args.signal?.aborted) return { failureClass: "interrupted", reason: "the run was stopped" };
  if (error instanceof WorkspaceProvisionError) {
    await run.context.sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
    const how = error.exitCode === null ? "did not finish" : `exited ${error.exitCode}`;
    // The detail reaches commit messages and GitHub: the log is named relative to the run
    // directory, never by a path of the App's machine.
    return {
      failureClass: "workspace-provision-failed",
      reason: `provisioning \`${error.cmd ?? "(none)"}\` ${how}; log: ${relative(run.layout.root, error.logPath)} in the run directory`,
    };
  }
  // Stryker disable next-line ConditionalExpression: everything the pipeline throws is an Error
  return { failureClass: failureClassOf(error), reason: error instanceof Error ? error.message : String(error) };
}
