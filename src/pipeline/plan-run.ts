/**
 * A story with a plan: its tasks in waves. Each task of a wave takes a slot (up to the
 * concurrency; beyond the story's own slot, only while the runner has one free), gets its own fresh worktree branched from the story branch as the wave
 * found it, is provisioned inside that slot, and runs the workflow's per-task stages; its
 * work must stay inside its declared files. At the end of the wave the completed tasks are
 * merged onto the story branch in plan order; a conflict fails the later task's attempt,
 * which runs again on top of the merged state. So does a merge that the workflow's
 * test-integrity gate finds weakening the suite against the story's base: no wave builds on a
 * weakened suite. A blocked task blocks its dependents only.
 * After the last wave the story's integration step runs on the merged branch: the
 * story-level clean-clone check, then the workflow's story-level stages (the documenter) and
 * the integrity gate after them.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { storyCommitMessage } from "./commit.js";
import type { RetryEvidence } from "./context.js";
import type { FailureClass } from "./events.js";
import { advanceStoryBranch, emptyCommit, ensureStoryBranch, mergeCommit, mergedTasks, TASK_TRAILER } from "./merge.js";
import type { Plan, PlanTask } from "./plan.js";
import { archiveAttempt } from "./run-dir.js";
import { integrationStages, runIntegration } from "./plan-integration.js";
import { runPlanTask, type PlanTaskResult } from "./plan-task.js";
import { judgeMerge, storyIntegrityBase } from "./stages/index.js";
import type { StoryRun } from "./story-run.js";
import { inSlots } from "./task-slots.js";
import { INTEGRATION_CLEAN_CLONE, INTEGRATION_TASK } from "./snapshot.js";
import type { StoryOutcome } from "./types.js";

interface Pending {
  task: PlanTask;
  attempt: number;
  retry?: RetryEvidence;
}

/** Runs a planned story to its outcome; the story branch carries every completed task's work. */
export async function runPlan(run: StoryRun, plan: Plan): Promise<StoryOutcome> {
  const { args } = run;
  const { sink } = run.context;
  const taskStages = run.taskStages;
  let tip = await ensureStoryBranch(args.repoDir, args.branch, args.baseRef);
  const kept = await mergedTasks(args.repoDir, tip);
  // Each task's merge is judged against where the story started, as the whole story is at its
  // end; not against the wave before: a case moved in one wave and dropped in the next is the story's loss.
  const integrity = args.workflow.stages.find((stage) => stage.kind === "integrity");
  const storyBase = integrity ? await storyIntegrityBase(args.repoDir, tip, run.context.integrityBase) : undefined;
  for (const task of plan.tasks) {
    await sink.emit({
      kind: "task.planned",
      taskId: task.id,
      title: task.title,
      wave: task.wave,
      files: task.files,
      blockedBy: task.blockedBy,
      stages: taskStages.map((stage) => stage.id),
    });
  }
  const onMerged = [...(args.config.test.command !== undefined ? [INTEGRATION_CLEAN_CLONE] : []), ...integrationStages(run).map((stage) => stage.id)];
  await sink.emit({
    kind: "task.planned",
    taskId: INTEGRATION_TASK,
    title: "Merged story branch",
    wave: 0,
    files: [],
    blockedBy: plan.tasks.map((task) => task.id),
    stages: onMerged,
  });

  const state = new Map<string, { outcome: "completed" | "blocked"; failureClass?: FailureClass; detail?: string }>();
  for (const id of kept) {
    if (!plan.tasks.some((task) => task.id === id)) continue;
    state.set(id, { outcome: "completed" });
    await sink.emit({ kind: "task.finished", taskId: id, outcome: "completed", attempt: 1, durationMs: 0, kept: true });
  }
  const earlier: string[] = kept.size > 0 ? [`Earlier runs completed: ${[...kept].join(", ")}.`] : [];

  for (const [index, wave] of plan.waves.entries()) {
    if (run.args.signal?.aborted) break;
    const ready: Pending[] = [];
    for (const id of wave) {
      if (state.has(id)) continue;
      const task = plan.tasks.find((candidate) => candidate.id === id);
      if (!task) continue;
      const blocker = task.blockedBy.find((other) => state.get(other)?.outcome === "blocked");
      if (blocker !== undefined) {
        const detail = `task '${task.id}' waits for task '${blocker}', which is blocked`;
        state.set(id, { outcome: "blocked", failureClass: "blocked-by-dependency", detail });
        await sink.emit({ kind: "task.finished", taskId: id, outcome: "blocked", attempt: 1, durationMs: 0, failureClass: "blocked-by-dependency", detail });
        continue;
      }
      ready.push({ task, attempt: 1 });
    }
    if (ready.length === 0) continue;
    await sink.emit({ kind: "wave.started", wave: index + 1, tasks: ready.map((pending) => pending.task.id), base: tip });
    const merged: string[] = [];
    let pending = ready;
    while (pending.length > 0) {
      const base = tip;
      const results = await inSlots(pending, run.concurrency, run.slots, (item) => runPlanTask(run, { ...item, base, earlier: earlier.join("\n") }));
      const again: Pending[] = [];
      for (const [at, item] of pending.entries()) {
        const result = results[at] as PlanTaskResult;
        if (!result.passed) {
          state.set(item.task.id, { outcome: "blocked", failureClass: result.failureClass, detail: result.reason });
          continue;
        }
        const message =
          `Merge task ${item.task.id}: ${item.task.title.replace(/\s+/g, " ").trim()}`.slice(0, 72) +
          `\n\nStory: ${args.story.id}\n${TASK_TRAILER}: ${item.task.id}\n`;
        const merge = await mergeCommit(args.repoDir, tip, result.commit, message);
        const weakened =
          merge.merged && integrity && storyBase !== undefined
            ? await judgeMerge(run.context, {
                repoDir: args.repoDir,
                taskId: item.task.id,
                attempt: result.attempt,
                stage: integrity.id,
                base: storyBase,
                merged: merge.commit,
              })
            : undefined;
        if (weakened && integrity) {
          // Not merged: the task runs again on the story branch as it is, told what its merge weakened.
          const failure = { stage: integrity.id, ...weakened.failure, ...weakened.evidence, atCeiling: "test-integrity" as const };
          const retry = await mergeFailed(run, item, result.attempt, failure);
          if (retry) again.push(retry);
          else state.set(item.task.id, { outcome: "blocked", failureClass: "test-integrity", detail: weakened.failure.reason });
          continue;
        }
        if (merge.merged) {
          await advanceStoryBranch(args.repoDir, args.branch, tip, merge.commit);
          tip = merge.commit;
          merged.push(item.task.id);
          state.set(item.task.id, { outcome: "completed" });
          earlier.push(`- wave ${index + 1}, task ${item.task.id} (${item.task.title}): changed ${result.changed.slice(0, 20).join(", ") || "nothing"}`);
          continue;
        }
        const retry = await mergeFailed(run, item, result.attempt, conflictOf(run, item.task.id, merge.conflicts, merged));
        if (retry) again.push(retry);
        else state.set(item.task.id, { outcome: "blocked", failureClass: "retry-ceiling", detail: "merge conflict at the attempt ceiling" });
      }
      pending = again;
    }
    if (merged.length > 0) await sink.emit({ kind: "wave.merged", wave: index + 1, merged, commit: tip });
  }

  const blocked = plan.tasks.filter((task) => state.get(task.id)?.outcome !== "completed");
  if (blocked.length > 0) {
    const root = blocked.find((task) => state.get(task.id)?.failureClass !== "blocked-by-dependency") ?? blocked[0];
    const rootState = root ? state.get(root.id) : undefined;
    const failureClass: FailureClass = run.args.signal?.aborted ? "interrupted" : (rootState?.failureClass ?? "interrupted");
    const lines = blocked.map((task) => `- ${task.id}: ${state.get(task.id)?.failureClass ?? "interrupted"}: ${state.get(task.id)?.detail ?? "did not run"}`);
    const detail = [`${blocked.length} of ${plan.tasks.length} tasks blocked:`, ...lines].join("\n");
    return blockPlan(
      run,
      tip,
      failureClass,
      detail,
      blocked.map((task) => task.id),
    );
  }
  const integration = await runIntegration(run, tip);
  if (!integration.passed) return blockPlan(run, tip, integration.failureClass, integration.reason, []);
  await advanceStoryBranch(args.repoDir, args.branch, tip, integration.commit);
  await sink.emit({ kind: "story.completed", taskId: INTEGRATION_TASK, branch: args.branch, commit: integration.commit });
  return { status: "completed", branch: args.branch, commit: integration.commit, runDir: run.layout.root, worktree: integration.worktree };
}

/** Why a task's merge failed, the evidence its next prompts show, and the class it blocks as at the ceiling. */
type MergeFailure = Omit<RetryEvidence, "attempt"> & { atCeiling: FailureClass };

/** A merge conflict fails the later task's attempt ('retry-ceiling' at the ceiling). */
function conflictOf(run: StoryRun, taskId: string, conflicts: string[], mergedBefore: string[]): MergeFailure {
  const after = mergedBefore.length > 0 ? ` after ${mergedBefore.map((id) => `'${id}'`).join(", ")} merged` : "";
  const reason = `task '${taskId}' conflicts with the story branch${after} in ${conflicts.slice(0, 20).join(", ") || "(unnamed paths)"}; it runs again on top of the merged state`;
  return { stage: run.taskStages.at(-1)?.id ?? run.taskRetryStage, failureClass: "base-conflict", reason, atCeiling: "retry-ceiling" };
}

/** A task whose merge failed (a conflict, a weakened suite) runs again on the merged state; undefined at the ceiling, where it blocks. */
async function mergeFailed(run: StoryRun, item: Pending, attempt: number, failure: MergeFailure): Promise<Pending | undefined> {
  const { sink } = run.context;
  const taskId = item.task.id;
  const { atCeiling, ...evidence } = failure;
  const { stage: fromStage, failureClass, reason } = evidence;
  const layout = run.taskLayout(taskId);
  const archiveDir = archiveAttempt(layout, attempt, { stage: fromStage, failureClass, reason, at: run.context.clock().toISOString() });
  await sink.emit({ kind: "attempt.archived", taskId, attempt, archiveDir });
  if (attempt >= run.context.maxAttempts) {
    const detail = `attempt ${attempt} of ${run.context.maxAttempts} failed at the merge (${failureClass}): ${reason}`;
    await sink.emit({ kind: "task.finished", taskId, outcome: "blocked", attempt, durationMs: 0, failureClass: atCeiling, detail });
    return undefined;
  }
  await sink.emit({
    kind: "retry.scheduled",
    taskId,
    failedAttempt: attempt,
    nextAttempt: attempt + 1,
    fromStage,
    retryStage: run.taskRetryStage,
    failureClass,
    reason,
  });
  return { task: item.task, attempt: attempt + 1, retry: { attempt, ...evidence } };
}

/** Ends a planned story blocked: an empty commit on the merged state names the class and the blocked tasks. */
export async function blockPlan(run: StoryRun, tip: string, failureClass: FailureClass, detail: string, blockedTasks: string[]): Promise<StoryOutcome> {
  const { args } = run;
  let commit: string | undefined;
  try {
    commit = await emptyCommit(args.repoDir, tip, storyCommitMessage(args.story, failureClass, detail));
    await advanceStoryBranch(args.repoDir, args.branch, tip, commit);
  } catch (error) {
    commit = undefined;
    appendFileSync(join(run.layout.logs, "coordinator.log"), `commit of the blocked story failed: ${String(error)}\n`);
  }
  await run.context.sink.emit({ kind: "story.blocked", failureClass, detail, blockedTasks, ...(commit ? { branch: args.branch, commit } : {}) });
  return {
    status: "blocked",
    failureClass,
    detail,
    branch: args.branch,
    ...(commit ? { commit } : {}),
    runDir: run.layout.root,
    worktree: run.layout.root,
    blockedTasks,
  };
}
