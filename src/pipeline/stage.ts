import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CheckFailure } from "./checks.js";
import { checkArtifacts, readArtifact, runCleanClone, runSuiteGate } from "./checks.js";
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
  const outcome = await stageBody(task, stage, attempt, retry, testCommand);
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

async function stageBody(task: TaskRun, stage: Stage, attempt: number, retry: RetryEvidence | undefined, testCommand: string | undefined): Promise<StageOutcome> {
  const stageDir = task.layout.stageDir(attempt, stage.id);
  const artifactDir = join(stageDir, "artifacts");
  if (stage.gate === "suite" && testCommand !== undefined) {
    await ensureProvisioned(task, `gate:${stage.id}`);
    const gateFailure = await runSuiteGate(task, stage, attempt, testCommand);
    if (gateFailure) return failed(gateFailure);
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
    task.seatsLaunched += 1;
    const result = await task.deps.runSeat({
      launch: seat.launch,
      stage: stage.id,
      attempt,
      task: task.taskId,
      worktree: task.worktree.path,
      promptFile,
      artifactDir,
      logPath: join(stageDir, "agent.log"),
      timeoutMs: seat.timeoutMs,
      envAllow: task.agentEnv,
      sandbox: task.sandbox,
      ...(task.signal ? { signal: task.signal } : {}),
    });
    if (result.timedOut) return failed({ failureClass: "agent-timeout", reason: `the ${stage.seat} agent was stopped at its timeout (${seat.timeoutMs} ms)` });
    if (result.exitCode !== 0) {
      const why = result.spawnError ?? `exited ${result.exitCode ?? "on a signal"}`;
      return failed({ failureClass: "agent-exit", reason: `the ${stage.seat} agent ${why}` });
    }
    const artifactFailure = checkArtifacts(stage, artifactDir);
    if (artifactFailure) return failed(artifactFailure);
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
