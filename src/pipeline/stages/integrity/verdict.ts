/**
 * What every run of the test-integrity gate shares, wherever it looks (a task's worktree, a
 * task's work merged onto the story branch): the repository's and the writer's acceptance, the
 * bounded `integrity.finished` line, and the failed outcome with the findings for the next prompts.
 */
import { judgeChange, type AcceptedFinding, type FileChange, type Finding, type IntegrityVerdict, type RunCounts } from "../../../integrity/index.js";
import { MAX_JOURNALED_FINDINGS } from "../../event-schemas.js";
import { matchesAny } from "../../globs.js";
import type { RunContext } from "../../task.js";
import type { CheckFailure } from "../../check-results.js";
import type { StageEvidence } from "../kind.js";

/** Findings the next prompt lists; the check run and the journal have the rest. */
const MAX_PROMPT_FINDINGS = 50;

/** A finding as one line of a prompt or a reason: where, what, which rule. */
export function findingLine(finding: Finding): string {
  const where = finding.file === "" ? "the suite" : `${finding.file}:${finding.line}`;
  return `${where}: ${finding.message} (${finding.kind})`;
}

/** Judges `changes` under the run's acceptance: `.github/harness.yml` `integrity` and the writer who accepted the findings. */
export function judgeUnderPolicy(
  context: Pick<RunContext, "config" | "acceptIntegrity">,
  changes: readonly FileChange[],
  runs: { base?: RunCounts; head?: RunCounts; baseMissing?: string },
): IntegrityVerdict {
  const allow = context.config.integrity?.allow ?? [];
  return judgeChange(changes, runs, {
    allowed: (path) => allow.length > 0 && matchesAny(path, allow),
    workflows: context.config.integrity?.workflows ?? "hold",
    ...(context.acceptIntegrity !== undefined ? { acceptedBy: context.acceptIntegrity } : {}),
  });
}

/** The failure a verdict with findings is, and the evidence the next prompts show; undefined when nothing is left unaccepted. */
export function integrityFailure(verdict: IntegrityVerdict, where = ""): { failure: CheckFailure; evidence: StageEvidence } | undefined {
  if (verdict.findings.length === 0) return undefined;
  const lines = verdict.findings.map(findingLine);
  const shown = lines.slice(0, MAX_PROMPT_FINDINGS);
  if (lines.length > shown.length) shown.push(`… and ${lines.length - shown.length} more (see the integrity check run)`);
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more)` : "";
  return {
    failure: { failureClass: "test-integrity", reason: `${where}the change weakens the test suite: ${lines[0] ?? ""}${more}` },
    evidence: {
      findings: shown,
      retryGuidance:
        "Restore the tests, skips, assertions, test configuration or CI workflow named above. If the story truly needs one of these changes, keep it and explain why in your notes: a writer can accept it with /harness accept-integrity.",
    },
  };
}

const bounded = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const journaled = <T extends Finding>(finding: T): T => ({ ...finding, file: bounded(finding.file, 4096), message: bounded(finding.message, 1000) });

/** Where a gate's verdict belongs in the journal: the task and stage, the attempt, the base, and the merge it judged when it judged one. */
export interface IntegrityPlace {
  taskId: string;
  stage: string;
  attempt: number;
  base: string;
  /** The merge commit of the task's work onto the story branch, when the gate judged that instead of the worktree. */
  merged?: string;
}

/** Journals `integrity.finished`, bounded: at most {@link MAX_JOURNALED_FINDINGS} of each list. */
export async function journalIntegrity(context: Pick<RunContext, "sink">, place: IntegrityPlace, verdict: IntegrityVerdict, durationMs: number): Promise<void> {
  const findings = verdict.findings.slice(0, MAX_JOURNALED_FINDINGS).map(journaled);
  const accepted: AcceptedFinding[] = verdict.accepted.slice(0, MAX_JOURNALED_FINDINGS).map(journaled);
  const omitted = verdict.findings.length - findings.length + (verdict.accepted.length - accepted.length);
  const counts = verdict.counts.compared
    ? { compared: true, base: verdict.counts.base, head: verdict.counts.head }
    : { compared: false, reason: verdict.counts.reason };
  await context.sink.emit({
    kind: "integrity.finished",
    taskId: place.taskId,
    stage: place.stage,
    attempt: place.attempt,
    base: place.base,
    ...(place.merged !== undefined ? { merged: place.merged } : {}),
    files: verdict.files,
    findings,
    accepted,
    ...(omitted > 0 ? { omitted } : {}),
    counts,
    unread: verdict.unread.slice(0, MAX_JOURNALED_FINDINGS).map((path) => bounded(path, 4096)),
    durationMs,
  });
}
