import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RetryEvidence } from "./context.js";
import { stageKind, type StageOutcome } from "./stages/index.js";
import type { TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";

export type { StageEvidence, StageOutcome } from "./stages/index.js";

/**
 * Runs one stage of one attempt through its kind's run step (`stages/<kind>/`), journaling
 * `stage.started` and `stage.finished` around it.
 */
export async function runStage(task: TaskRun, stage: Stage, attempt: number, retry: RetryEvidence | undefined): Promise<StageOutcome> {
  const taskId = task.taskId;
  mkdirSync(join(task.layout.stageDir(attempt, stage.id), "artifacts"), { recursive: true });
  await task.sink.emit({ kind: "stage.started", taskId, stage: stage.id, attempt });
  const started = performance.now();
  const outcome = await stageKind(stage.kind).run({ task, stage, attempt, retry });
  await task.sink.emit({
    kind: "stage.finished",
    taskId,
    stage: stage.id,
    attempt,
    outcome: outcome.passed ? "passed" : "failed",
    durationMs: Math.round(performance.now() - started),
    ...(outcome.passed ? {} : { failureClass: outcome.failureClass, detail: outcome.reason }),
  });
  return outcome;
}
