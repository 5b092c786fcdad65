/** One run of the integrity gate in a task's worktree: read the change and the run counts, judge, journal, decide. */
import { readLogCounts, readWorkChange, type RunCounts } from "../../../integrity/index.js";
import { git, gitResult } from "../../../workspace/index.js";
import { keptBaselineCounts } from "../../baseline.js";
import { cleanCloneLogPath } from "../../checks.js";
import type { TaskRun } from "../../task.js";
import { failed, type StageOutcome, type StageStep } from "../kind.js";
import { integrityFailure, journalIntegrity, judgeUnderPolicy } from "./verdict.js";

/** The commit the work is judged against: the merge base with the story's starting ref when known, else the task's base. */
async function integrityBaseOf(task: TaskRun): Promise<string> {
  const cwd = task.worktree.path;
  const own = await git(["rev-parse", "--verify", `${task.worktree.base}^{commit}`], { cwd, readOnly: true });
  if (task.integrityBase === undefined) return own;
  const merged = await gitResult(["merge-base", task.integrityBase, own], { cwd, readOnly: true });
  const base = merged.stdout?.toString().trim() ?? "";
  return merged.exitCode === 0 && base !== "" ? base : own;
}

/**
 * The tests the suite ran on `base`: the task's baseline when it ran there, else a baseline kept
 * for `base` by an earlier task or story. A baseline on later work (the commit a blocked story
 * left, which a re-admission starts from; the earlier waves' merged tasks) counts that work's
 * tests, not the base's: it is never compared against, and the count is then not compared.
 */
async function baseCountsOf(task: TaskRun, base: string): Promise<{ base?: RunCounts; baseMissing?: string }> {
  const baseline = task.baseline;
  if (baseline === undefined) {
    // A task with no baseline of its own (a planned story's integration step): the one kept for the base, when a task ran it.
    const kept = await keptBaselineCounts(task, base);
    return kept ? { base: kept } : {};
  }
  if (baseline.commit === base) return baseline.counts ? { base: baseline.counts } : {};
  const kept = await keptBaselineCounts(task, base);
  if (kept) return { base: kept };
  return {
    baseMissing: `the baseline ran on ${baseline.commit.slice(0, 12)}, later work than the base ${base.slice(0, 12)}, and no baseline of the base was kept`,
  };
}

/** Runs the gate once and returns the stage's outcome. */
export async function integrityStep(step: StageStep): Promise<StageOutcome> {
  const { task, stage, attempt } = step;
  const started = performance.now();
  const base = await integrityBaseOf(task);
  const changes = await readWorkChange({ worktree: task.worktree.path, base });
  const headCounts = await readLogCounts(cleanCloneLogPath(task, attempt));
  const verdict = judgeUnderPolicy(task, changes, { ...(await baseCountsOf(task, base)), ...(headCounts ? { head: headCounts } : {}) });
  await journalIntegrity(task, { taskId: task.taskId, stage: stage.id, attempt, base }, verdict, Math.round(performance.now() - started));
  const failure = integrityFailure(verdict);
  return failure ? failed(failure.failure, failure.evidence) : { passed: true };
}
