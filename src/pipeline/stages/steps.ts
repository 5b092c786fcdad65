/**
 * The steps several kinds share: the suite gate (`seat` behind a gate, `gate`), the verdict of a
 * judging seat (`seat` with a verdict, `review`) and the clean-clone check (`seat` with
 * `clean_clone`, `clean-clone`). Each returns a failed outcome, or undefined when it passed.
 */
import { join } from "node:path";
import { cleanClonePassed } from "../../workspace/index.js";
import { cannotStartFailure, readArtifact, runCleanClone, runSuiteGate } from "../checks.js";
import { ensureProvisioned } from "../task.js";
import { failed, type StageOutcome, type StageStep } from "./kind.js";

/**
 * The repository's test command, read from the task's configuration. Preflight requires it of
 * every stage that runs the suite, so its absence here is the harness's own mistake: it blocks.
 */
function testCommandOf(step: StageStep): { command: string } | { missing: StageOutcome } {
  const command = step.task.config.test.command;
  if (command !== undefined) return { command };
  return { missing: failed({ failureClass: "config-invalid", reason: `stage '${step.stage.id}' runs the test suite, but test.command is not set` }, {}, true) };
}

/** The repository's suite in the task's worktree, provisioned first. */
export async function suiteGateStep(step: StageStep): Promise<StageOutcome | undefined> {
  const { task, stage, attempt } = step;
  const test = testCommandOf(step);
  if ("missing" in test) return test.missing;
  await ensureProvisioned(task, `gate:${stage.id}`);
  const gateFailure = await runSuiteGate(task, stage, attempt, test.command);
  return gateFailure ? failed(gateFailure, {}, gateFailure.infrastructure === true) : undefined;
}

/** Reads the verdict artifact `name` the stage's seat left, journals it, and fails on `fail` with its findings. */
export async function verdictStep(step: StageStep, artifactDir: string, name: string): Promise<StageOutcome | undefined> {
  const { task, stage, attempt } = step;
  const verdict = (await readArtifact(join(artifactDir, name))) as { verdict: "pass" | "fail"; findings: string[]; retryGuidance?: string } | undefined;
  // Checked by the seat's run already, and no agent outlives its step; still, a verdict that is gone is no verdict.
  if (verdict === undefined) return failed({ failureClass: "artifact-invalid", reason: `${name} could not be read back after it was checked` });
  await task.sink.emit({
    kind: "verdict.recorded",
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    verdict: verdict.verdict,
    findings: verdict.findings,
    ...(verdict.retryGuidance !== undefined ? { retryGuidance: verdict.retryGuidance } : {}),
  });
  if (verdict.verdict === "pass") return undefined;
  const evidence = { findings: verdict.findings, ...(verdict.retryGuidance !== undefined ? { retryGuidance: verdict.retryGuidance } : {}) };
  const more = verdict.findings.length > 1 ? ` (and ${verdict.findings.length - 1} more)` : "";
  const first = verdict.findings[0] ?? "no findings given";
  return failed({ failureClass: "verdict-fail", reason: `the ${stage.seat ?? stage.id} judged the change failing: ${first}${more}` }, evidence);
}

/** The suite in a fresh clone with the change committed, its result written under `artifact`. */
export async function cleanCloneStep(step: StageStep, artifact: string): Promise<StageOutcome | undefined> {
  const { task, stage, attempt } = step;
  const test = testCommandOf(step);
  if ("missing" in test) return test.missing;
  const record = await runCleanClone(task, stage, attempt, artifact, test.command);
  if (!record.ran)
    return failed({ failureClass: "clean-clone-not-run", reason: `the clean-clone check could not run: ${record.reason ?? "no reason given"}` }, {}, true);
  if (cleanClonePassed(record)) return undefined;
  const cannotStart =
    record.exitCode === undefined ? undefined : cannotStartFailure(test.command, { exitCode: record.exitCode, tail: record.outputTail ?? "" });
  if (cannotStart) return failed(cannotStart, { cleanClone: record }, true);
  const how = record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`;
  return failed(
    { failureClass: "clean-clone-failed", reason: `the suite passed in the worktree but ${how} in a fresh clone of the committed change` },
    { cleanClone: record },
  );
}

/** The folder of one pass of a stage: round 0 its own, a pass after a fixer round `round-<n>` inside it. */
export function roundDir(step: StageStep, round: number): string {
  const dir = step.task.layout.stageDir(step.attempt, step.stage.id);
  return round === 0 ? dir : join(dir, `round-${round}`);
}
