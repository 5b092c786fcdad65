/** One run of the integrity gate in a task's worktree: read the change and the run counts, judge, journal, decide. */
import { judgeChange, readLogCounts, readWorkChange, type AcceptedFinding, type Finding, type IntegrityVerdict } from "../../../integrity/index.js";
import { git, gitResult } from "../../../workspace/index.js";
import { baselineLogPath } from "../../baseline.js";
import { cleanCloneLogPath } from "../../checks.js";
import { MAX_JOURNALED_FINDINGS } from "../../event-schemas.js";
import { matchesAny } from "../../globs.js";
import type { TaskRun } from "../../task.js";
import { failed, type StageOutcome, type StageStep } from "../kind.js";

/** Findings the next prompt lists; the check run and the journal have the rest. */
const MAX_PROMPT_FINDINGS = 50;

/** The commit the work is judged against: the merge base with the story's starting ref when known, else the task's base. */
async function integrityBaseOf(task: TaskRun): Promise<string> {
  const cwd = task.worktree.path;
  const own = await git(["rev-parse", "--verify", `${task.worktree.base}^{commit}`], { cwd, readOnly: true });
  if (task.integrityBase === undefined) return own;
  const merged = await gitResult(["merge-base", task.integrityBase, own], { cwd, readOnly: true });
  const base = merged.stdout?.toString().trim() ?? "";
  return merged.exitCode === 0 && base !== "" ? base : own;
}

/** A finding as one line of a prompt or a reason: where, what, which rule. */
export function findingLine(finding: Finding): string {
  const where = finding.file === "" ? "the suite" : `${finding.file}:${finding.line}`;
  return `${where}: ${finding.message} (${finding.kind})`;
}

/** Runs the gate once and returns the stage's outcome. */
export async function integrityStep(step: StageStep): Promise<StageOutcome> {
  const { task, stage, attempt } = step;
  const started = performance.now();
  const base = await integrityBaseOf(task);
  const changes = await readWorkChange({ worktree: task.worktree.path, base });
  const baseCounts = task.baseline ? await readLogCounts(baselineLogPath(task)) : undefined;
  const headCounts = await readLogCounts(cleanCloneLogPath(task, attempt));
  const allow = task.config.integrity?.allow ?? [];
  const verdict = judgeChange(
    changes,
    { ...(baseCounts ? { base: baseCounts } : {}), ...(headCounts ? { head: headCounts } : {}) },
    {
      allowed: (path) => allow.length > 0 && matchesAny(path, allow),
      workflows: task.config.integrity?.workflows ?? "hold",
      ...(task.acceptIntegrity !== undefined ? { acceptedBy: task.acceptIntegrity } : {}),
    },
  );
  await journal(task, stage.id, attempt, base, verdict, Math.round(performance.now() - started));
  if (verdict.findings.length === 0) return { passed: true };
  const lines = verdict.findings.map(findingLine);
  const shown = lines.slice(0, MAX_PROMPT_FINDINGS);
  if (lines.length > shown.length) shown.push(`… and ${lines.length - shown.length} more (see the integrity check run)`);
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more)` : "";
  return failed(
    { failureClass: "test-integrity", reason: `the change weakens the test suite: ${lines[0] ?? ""}${more}` },
    {
      findings: shown,
      retryGuidance:
        "Restore the tests, skips, assertions, test configuration or CI workflow named above. If the story truly needs one of these changes, keep it and explain why in your notes: a writer can accept it with /harness accept-integrity.",
    },
  );
}

const bounded = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const journaled = <T extends Finding>(finding: T): T => ({ ...finding, file: bounded(finding.file, 4096), message: bounded(finding.message, 1000) });

/** Journals `integrity.finished`, bounded: at most {@link MAX_JOURNALED_FINDINGS} of each list. */
async function journal(task: TaskRun, stage: string, attempt: number, base: string, verdict: IntegrityVerdict, durationMs: number): Promise<void> {
  const findings = verdict.findings.slice(0, MAX_JOURNALED_FINDINGS).map(journaled);
  const accepted: AcceptedFinding[] = verdict.accepted.slice(0, MAX_JOURNALED_FINDINGS).map(journaled);
  const omitted = verdict.findings.length - findings.length + (verdict.accepted.length - accepted.length);
  const counts = verdict.counts.compared
    ? { compared: true, base: verdict.counts.base, head: verdict.counts.head }
    : { compared: false, reason: verdict.counts.reason };
  await task.sink.emit({
    kind: "integrity.finished",
    taskId: task.taskId,
    stage,
    attempt,
    base,
    files: verdict.files,
    findings,
    accepted,
    ...(omitted > 0 ? { omitted } : {}),
    counts,
    unread: verdict.unread.slice(0, MAX_JOURNALED_FINDINGS).map((path) => bounded(path, 4096)),
    durationMs,
  });
}
