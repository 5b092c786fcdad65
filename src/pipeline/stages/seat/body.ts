/** One pass of a seat stage: the suite gate when declared, the seat with its verdict, then the clean-clone check when declared. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cleanClonePassed } from "../../../workspace/index.js";
import { readArtifact, runCleanClone, runSuiteGate } from "../../checks.js";
import { ensureProvisioned, seatLaunch } from "../../task.js";
import { failed, type StageOutcome, type StageStep } from "../kind.js";
import { launchStageSeat } from "../seat-launch.js";

/** Runs the stage once; `round` > 0 is a run again after a fixer round (its own folder). */
export async function seatStageBody(step: StageStep, round: number): Promise<StageOutcome> {
  const { task, stage, attempt, testCommand } = step;
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
    const seatFailure = await launchStageSeat(step, seat, stageDir, artifactDir);
    if (seatFailure) return seatFailure;
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
    if (!cleanClonePassed(record)) {
      const how = record.timedOut ? "timed out" : `exited ${record.exitCode ?? "without a code"}`;
      return failed({ failureClass: "clean-clone-failed", reason: `the suite passed in the worktree but ${how} in a fresh clone of the committed change` }, { cleanClone: record });
    }
  }
  return { passed: true };
}
