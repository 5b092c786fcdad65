/**
 * The steps several kinds share: the suite gate (`seat` behind a gate, `gate`), the verdict of a
 * judging seat (`seat` with a verdict, `review`), the clean-clone check (`seat` with
 * `clean_clone`, `clean-clone`) and the clean clone as the gate (`seat` with both). Each returns a failed outcome, or undefined when it passed.
 */
import { join } from "node:path";
import { cleanClonePassed } from "../../workspace/index.js";
import type { CheckFailure } from "../check-results.js";
import {
  cannotStartFailure,
  cleanCloneLogPath,
  cleanClonePolicy,
  judgeSuite,
  readArtifact,
  runCleanClone,
  runSuiteGate,
  runSuiteInWorktree,
  suiteLogPath,
} from "../checks.js";
import type { CleanCloneRecord } from "../events.js";
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
  return failed(cleanCloneFailure(record), { cleanClone: record });
}

/**
 * The clean clone as the suite gate of a stage that declares both (`gate: "suite"` and
 * `clean_clone`): the suite runs once, in a fresh clone of the committed change, and that run is
 * what the stage's seat judges. Only when it fails does the suite run again in the worktree, to
 * tell a change that passes where it stands but not where it ships (`clean-clone-failed`) from a
 * failing one (`suite-failed`, or `baseline-red` when the base fails the same way).
 */
export async function cleanCloneGateStep(step: StageStep, artifact: string): Promise<StageOutcome | undefined> {
  const { task, stage, attempt } = step;
  const test = testCommandOf(step);
  if ("missing" in test) return test.missing;
  // The clone links the worktree's installed dependencies, and the in-tree re-run needs them too.
  await ensureProvisioned(task, `gate:${stage.id}`);
  const record = await runCleanClone(task, stage, attempt, artifact, test.command);
  const notRun: CheckFailure | undefined = record.ran
    ? undefined
    : { failureClass: "clean-clone-not-run", reason: `the clean-clone check could not run: ${record.reason ?? "no reason given"}` };
  const gate = {
    kind: "gate.finished" as const,
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    command: test.command,
    timedOut: record.timedOut === true,
    outputTail: record.outputTail ?? "",
    durationMs: record.durationMs,
    policy: cleanClonePolicy(task),
    where: "clean-clone" as const,
    logPath: cleanCloneLogPath(task, attempt),
    ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}),
  };
  if (notRun === undefined && cleanClonePassed(record)) {
    task.lastSuite = {
      command: gate.command,
      timedOut: gate.timedOut,
      outputTail: gate.outputTail,
      ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}),
    };
    await task.sink.emit(gate);
    return undefined;
  }
  const rerun = await runSuiteInWorktree(task, stage, attempt, test.command);
  const rerunExit = rerun.exitCode ?? undefined;
  await task.sink.emit({
    ...gate,
    worktree: {
      timedOut: rerun.timedOut,
      outputTail: rerun.tail,
      durationMs: rerun.durationMs,
      logPath: suiteLogPath(task, attempt, stage.id),
      ...(rerunExit !== undefined ? { exitCode: rerunExit } : {}),
    },
  });
  const inTree = judgeSuite(task, test.command, rerun);
  // A command the provisioned worktree cannot start either is the environment's; else the clone could not run it.
  if (notRun) return inTree?.failureClass === "environment" ? failed(inTree, {}, true) : failed(notRun, {}, true);
  if (inTree) return failed(inTree, {}, inTree.infrastructure === true);
  return failed(cleanCloneFailure(record), { cleanClone: record });
}

/** The clean-clone failure of a change whose suite passes in the worktree. */
function cleanCloneFailure(record: CleanCloneRecord): CheckFailure {
  const how = record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`;
  return { failureClass: "clean-clone-failed", reason: `the suite passed in the worktree but ${how} in a fresh clone of the committed change` };
}

/** The folder of one pass of a stage: round 0 its own, a pass after a fixer round `round-<n>` inside it. */
export function roundDir(step: StageStep, round: number): string {
  const dir = step.task.layout.stageDir(step.attempt, step.stage.id);
  return round === 0 ? dir : join(dir, `round-${round}`);
}
