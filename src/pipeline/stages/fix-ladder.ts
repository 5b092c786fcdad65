/**
 * The fix ladder of a `review` or `gate` stage (`on_fail.fix`): a failing review or a red gate
 * goes to the fixer seat with the findings or the gate's output, then the reviewer looks again
 * or the gate runs again, up to `max_rounds`, before the attempt fails. Provisioning,
 * infrastructure and agent failures stay outside the ladder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderPrompt, type RetryEvidence } from "../context.js";
import type { FailureClass } from "../events.js";
import { ensureProvisioned, seatLaunch } from "../task.js";
import { spendingOf } from "../budget.js";
import { failed, type StageOutcome, type StageStep } from "./kind.js";

type Failed = Extract<StageOutcome, { passed: false }>;

/**
 * Runs `body` (round 0), then the fixer and `body` again while the outcome is the stage's own
 * failure (`fixes`: a failing verdict, a red suite) and rounds remain.
 */
export async function withFixLadder(step: StageStep, fixes: FailureClass, body: (round: number) => Promise<StageOutcome>): Promise<StageOutcome> {
  const fix = step.stage.fix;
  let outcome = await body(0);
  for (let round = 1; fix && round <= fix.maxRounds && fixable(outcome, fixes); round += 1) {
    const fixed = await runFixer(step, round, outcome);
    if (!fixed.passed) return fixed;
    outcome = await body(round);
  }
  return outcome;
}

/** A failure the fix ladder works on: the stage's own check, not infrastructure or an agent's failure. */
function fixable(outcome: StageOutcome, fixes: FailureClass): outcome is Failed {
  return !outcome.passed && !outcome.infrastructure && outcome.failureClass === fixes;
}

/** One round of the fixer seat, with the failed gate's output or the verdict's findings in its prompt. */
async function runFixer(step: StageStep, round: number, failure: Failed): Promise<StageOutcome> {
  const { task, stage, attempt } = step;
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
    const spentBefore = task.budget.exhausted();
    if (spentBefore !== undefined) return failed({ failureClass: "budget-exhausted", reason: `the story's agent budget is spent: ${spentBefore}` }, {}, true);
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
      transcriptPath: join(dir, "transcript.jsonl"),
      timeoutMs: task.budget.seatTimeout(seat.timeoutMs),
      ...(task.budget.budget.maxTurnsPerSeat !== undefined ? { maxTurns: task.budget.budget.maxTurnsPerSeat } : {}),
      envAllow: task.agentEnv,
      sandbox: task.sandbox,
      ...(task.signal ? { signal: task.signal } : {}),
    });
    const spent = task.budget.spend(spendingOf(result), result.timedOut || result.exitCode !== 0);
    if (spent !== undefined)
      return failed({ failureClass: "budget-exhausted", reason: `the story's agent budget is spent at the ${fix.seat} seat: ${spent}` }, {}, true);
    if (result.timedOut) outcome = failed({ failureClass: "agent-timeout", reason: `the ${fix.seat} agent was stopped at its timeout (${seat.timeoutMs} ms)` });
    else if (result.exitCode !== 0)
      outcome = failed({ failureClass: "agent-exit", reason: `the ${fix.seat} agent ${result.spawnError ?? `exited ${result.exitCode ?? "on a signal"}`}` });
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
