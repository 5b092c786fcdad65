import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CheckFailure } from "./checks.js";
import { readArtifact, runCleanClone, runSuiteGate } from "./checks.js";
import { runSeatOfStage } from "./seat-run.js";
import { renderPrompt, type RetryEvidence } from "./context.js";
import { ensureProvisioned, seatLaunch, type TaskRun } from "./task.js";
import type { Stage } from "./workflow.js";

/** What the next attempt's prompt may carry: the agent's own words or measured results. */
export type StageEvidence = Pick<RetryEvidence, "findings" | "retryGuidance" | "cleanClone">;

/** How one stage of one attempt ended. */
export type StageOutcome =
  | { passed: true }
  | (CheckFailure & {
      passed: false;
      /** Infrastructure, not the agents' doing: blocks at once instead of retrying. */
      infrastructure: boolean;
      evidence: StageEvidence;
    });

/**
 * Runs one stage of one attempt: the suite gate when declared, then the seat's agent with
 * its rendered prompt, its artifacts and verdict, then the clean-clone check when declared.
 * Journals `stage.started` and `stage.finished` around it.
 */
export async function runStage(task: TaskRun, stage: Stage, attempt: number, retry: RetryEvidence | undefined, testCommand: string | undefined): Promise<StageOutcome> {
  const taskId = task.taskId;
  const stageDir = task.layout.stageDir(attempt, stage.id);
  mkdirSync(join(stageDir, "artifacts"), { recursive: true });
  await task.sink.emit({ kind: "stage.started", taskId, stage: stage.id, attempt });
  const started = performance.now();
  let outcome = await stageBody(task, stage, attempt, retry, testCommand, 0);
  // The fix ladder: a failed gate or verdict goes to the fixer, then the stage runs again.
  for (let round = 1; stage.fix && round <= stage.fix.maxRounds && fixable(outcome); round += 1) {
    const fixed = await runFixer(task, stage, attempt, round, outcome);
    if (!fixed.passed) {
      outcome = fixed;
      break;
    }
    outcome = await stageBody(task, stage, attempt, retry, testCommand, round);
  }
  const durationMs = Math.round(performance.now() - started);
  await task.sink.emit({
    kind: "stage.finished",
    taskId,
    stage: stage.id,
    attempt,
    outcome: outcome.passed ? "passed" : "failed",
    durationMs,
    ...(outcome.passed ? {} : { failureClass: outcome.failureClass, detail: outcome.reason }),
  });
  return outcome;
}

function failed(failure: CheckFailure, evidence: StageEvidence = {}, infrastructure = false): StageOutcome {
  return { passed: false, ...failure, infrastructure, evidence };
}

/** A failure the fix ladder works on: the stage's own gate or verdict, not infrastructure or the agent itself. */
function fixable(outcome: StageOutcome): outcome is Extract<StageOutcome, { passed: false }> {
  return !outcome.passed && !outcome.infrastructure && (outcome.failureClass === "suite-failed" || outcome.failureClass === "verdict-fail");
}

/** One round of the fixer seat, with the failed gate's output or the verdict's findings in its prompt. */
async function runFixer(task: TaskRun, stage: Stage, attempt: number, round: number, failure: Extract<StageOutcome, { passed: false }>): Promise<StageOutcome> {
  const fix = stage.fix;
  if (!fix) return failure;
  const dir = join(task.layout.stageDir(attempt, stage.id), `fix-${round}`);
  const artifactDir = join(dir, "artifacts");
  mkdirSync(artifactDir, { recursive: true });
  const started = performance.now();
  const seat = seatLaunch(task.config, fix.seat);
  let outcome: StageOutcome = { passed: true };
  if (seat) {
    await ensureProvisioned(task, `seat:${stage.id}:fix`);
    const promptFile = join(dir, "prompt.md");
    const evidence: RetryEvidence = { attempt, stage: stage.id, failureClass: failure.failureClass, reason: failure.reason, ...failure.evidence };
    writeFileSync(
      promptFile,
      renderPrompt(fix.template, {
        story: task.story,
        stage: stage.id,
        attempt,
        maxAttempts: task.maxAttempts,
        artifactDir,
        retry: evidence,
        ...(task.lastSuite ? { suite: task.lastSuite } : {}),
        ...(task.planContext ? { task: task.planContext } : {}),
      }),
    );
    task.seatsLaunched += 1;
    const result = await task.deps.runSeat({
      launch: seat.launch,
      stage: fix.seat,
      attempt,
      task: task.taskId,
      worktree: task.worktree.path,
      promptFile,
      artifactDir,
      logPath: join(dir, "agent.log"),
      timeoutMs: seat.timeoutMs,
      envAllow: task.agentEnv,
      sandbox: task.sandbox,
      ...(task.signal ? { signal: task.signal } : {}),
    });
    if (result.timedOut) outcome = failed({ failureClass: "agent-timeout", reason: `the ${fix.seat} agent was stopped at its timeout (${seat.timeoutMs} ms)` });
    else if (result.exitCode !== 0) outcome = failed({ failureClass: "agent-exit", reason: `the ${fix.seat} agent ${result.spawnError ?? `exited ${result.exitCode ?? "on a signal"}`}` });
  }
  await task.sink.emit({
    kind: "fix.finished",
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    round,
    seat: fix.seat,
    fixing: failure.failureClass,
    outcome: outcome.passed ? "passed" : "failed",
    durationMs: Math.round(performance.now() - started),
    ...(outcome.passed ? {} : { failureClass: outcome.failureClass, detail: outcome.reason }),
  });
  return outcome;
}

async function stageBody(task: TaskRun, stage: Stage, attempt: number, retry: RetryEvidence | undefined, testCommand: string | undefined, round: number): Promise<StageOutcome> {
  const stageDir = round === 0 ? task.layout.stageDir(attempt, stage.id) : join(task.layout.stageDir(attempt, stage.id), `round-${round}`);
  const artifactDir = join(stageDir, "artifacts");
  mkdirSync(artifactDir, { recursive: true });
  if (stage.gate === "suite" && testCommand !== undefined) {
    await ensureProvisioned(task, `gate:${stage.id}`);
    const gateFailure = await runSuiteGate(task, stage, attempt, testCommand);
    if (gateFailure) return failed(gateFailure, {}, gateFailure.infrastructure === true);
  }
  const seat = seatLaunch(task.config, stage.seat);
  if (seat) {
    await ensureProvisioned(task, `seat:${stage.id}`);
    const promptFile = join(stageDir, "prompt.md");
    const prompt = renderPrompt(stage.template, {
      story: task.story,
      stage: stage.id,
      attempt,
      maxAttempts: task.maxAttempts,
      artifactDir,
      ...(retry ? { retry } : {}),
      ...(task.lastSuite ? { suite: task.lastSuite } : {}),
      ...(task.planContext ? { task: task.planContext } : {}),
    });
    writeFileSync(promptFile, prompt);
    const seatEnd = await runSeatOfStage(task, stage, attempt, seat, promptFile, artifactDir);
    if (!seatEnd.ok) return failed(seatEnd.failure, {}, seatEnd.infrastructure);
    if (stage.verdict !== undefined) {
      const verdict = readArtifact(join(artifactDir, stage.verdict)) as { verdict: "pass" | "fail"; findings: string[]; retryGuidance?: string };
      await task.sink.emit({
        kind: "verdict.recorded",
        taskId: task.taskId,
        stage: stage.id,
        attempt,
        verdict: verdict.verdict,
        findings: verdict.findings,
        ...(verdict.retryGuidance !== undefined ? { retryGuidance: verdict.retryGuidance } : {}),
      });
      if (verdict.verdict === "fail") {
        const evidence = { findings: verdict.findings, ...(verdict.retryGuidance !== undefined ? { retryGuidance: verdict.retryGuidance } : {}) };
        const more = verdict.findings.length > 1 ? ` (and ${verdict.findings.length - 1} more)` : "";
        const first = verdict.findings[0] ?? "no findings given";
        return failed({ failureClass: "verdict-fail", reason: `the ${stage.seat} judged the change failing: ${first}${more}` }, evidence);
      }
    }
  }
  if (stage.cleanClone !== undefined && testCommand !== undefined) {
    const record = await runCleanClone(task, stage, attempt, stage.cleanClone, testCommand);
    if (!record.ran) return failed({ failureClass: "clean-clone-not-run", reason: `the clean-clone check could not run: ${record.reason ?? "no reason given"}` }, {}, true);
    if (record.exitCode !== 0) {
      const how = record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`;
      return failed({ failureClass: "clean-clone-failed", reason: `the suite passed in the worktree but ${how} in a fresh clone of the committed change` }, { cleanClone: record });
    }
  }
  return { passed: true };
}
