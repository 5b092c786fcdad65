/**
 * The test-integrity gate on a planned story's branch: each task's work, merged after its wave,
 * judged against the story's base before the story branch moves. Tasks that each kept the suite
 * whole in their own worktrees may not have together (a merge keeps one copy of a change both
 * made), and a story-level gate would otherwise look only once every wave had built on the
 * weakened suite.
 */
import { readCommitChange } from "../../../integrity/index.js";
import { gitResult } from "../../../workspace/index.js";
import type { RunContext } from "../../task.js";
import { integrityFailure, journalIntegrity, judgeUnderPolicy } from "./verdict.js";

/** Why a merge's gate compares no run counts: no suite runs on a merge. */
const NO_SUITE_ON_A_MERGE = "no suite runs on a wave's merge: the story's clean clone is counted once every wave merged";

/**
 * The commit a story's merges are judged against: the merge base of `tip` (the story branch as
 * this run found it) with the story's starting ref when known, else `tip` itself.
 */
export async function storyIntegrityBase(repoDir: string, tip: string, startedFrom: string | undefined): Promise<string> {
  if (startedFrom === undefined) return tip;
  const merged = await gitResult(["merge-base", startedFrom, tip], { cwd: repoDir, readOnly: true });
  const base = merged.stdout?.toString().trim() ?? "";
  return merged.exitCode === 0 && base !== "" ? base : tip;
}

/** Where a merge is judged: the repository, the task and attempt whose work it merged, the gate's stage, the story's base, the merge commit. */
export interface MergeToJudge {
  repoDir: string;
  taskId: string;
  attempt: number;
  stage: string;
  base: string;
  merged: string;
}

/**
 * Judges `merge.merged` against `merge.base` under the run's acceptance, journals
 * `integrity.finished` (with `merged`), and returns the failure with the findings for the task's
 * next prompts, or undefined when nothing is left unaccepted.
 */
export async function judgeMerge(
  context: Pick<RunContext, "config" | "acceptIntegrity" | "sink">,
  merge: MergeToJudge,
): Promise<ReturnType<typeof integrityFailure>> {
  const started = performance.now();
  const changes = await readCommitChange({ repo: merge.repoDir, base: merge.base, head: merge.merged });
  const verdict = judgeUnderPolicy(context, changes, { baseMissing: NO_SUITE_ON_A_MERGE });
  const { taskId, stage, attempt, base, merged } = merge;
  await journalIntegrity(context, { taskId, stage, attempt, base, merged }, verdict, Math.round(performance.now() - started));
  return integrityFailure(verdict, `merged onto the story branch, `);
}
