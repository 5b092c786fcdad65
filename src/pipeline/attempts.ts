import type { CheckFailure } from "./check-results.js";
import type { RetryEvidence } from "./context.js";
import type { FailureClass } from "./events.js";
import { overlapsBaseline } from "./baseline-pending.js";
import { archiveAttempt } from "./run-dir.js";
import { runStage } from "./stage.js";
import type { TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";

/** Attempt failures that, at the ceiling, block the task under their own class instead of `retry-ceiling`. */
const BLOCKS_AS_ITSELF: ReadonlySet<FailureClass> = new Set<FailureClass>(["test-integrity"]);

/** How a task's attempts ended. */
export type AttemptsResult =
  | { passed: true; attempt: number }
  | {
      passed: false;
      attempt: number;
      failureClass: FailureClass;
      reason: string;
      /** Blocks at once (infrastructure, a stop request), outside the attempt ladder. */
      infrastructure: boolean;
    };

export interface AttemptsOptions {
  stages: readonly Stage[];
  retryStage: string;
  /** The attempt to start with, and why the one before it was sent back (a plan task retried after a merge conflict). */
  startAttempt?: number;
  retry?: RetryEvidence;
  /** Where the first attempt starts: the first stage, or (a resumed task) the retry stage. */
  startAtRetryStage?: boolean;
  /** Checks the attempt's work once its last stage passed (a plan task: commit and scope). */
  accept?: (attempt: number) => Promise<CheckFailure | undefined>;
}

/**
 * The stage machine of one task: stage by stage, sending a failed attempt back to the retry
 * stage (archived, journaled, with the evidence in the next prompts) until the attempt ceiling.
 */
export async function runAttempts(task: TaskRun, options: AttemptsOptions): Promise<AttemptsResult> {
  const { stages, retryStage } = options;
  const retryIndex = Math.max(
    0,
    stages.findIndex((stage) => stage.id === retryStage),
  );
  let attempt = options.startAttempt ?? 1;
  let index = options.startAtRetryStage ? retryIndex : 0;
  let retry = options.retry;
  const interrupted = (reason: string): AttemptsResult => ({ passed: false, attempt, failureClass: "interrupted", reason, infrastructure: true });
  let first = true;
  for (;;) {
    if (task.signal?.aborted) return interrupted("the run was stopped");
    let failure: (CheckFailure & { stage: string; evidence: Partial<RetryEvidence> }) | undefined;
    const stage = stages[index];
    // The baseline runs beside the first stage when that is a plain seat; everything after it needs its answer.
    if (task.pendingBaseline && !(first && stage && overlapsBaseline(stage))) {
      const environment = await task.pendingBaseline.settle();
      if (environment) return { passed: false, attempt, failureClass: environment.failureClass, reason: environment.reason, infrastructure: true };
    }
    first = false;
    if (stage) {
      const outcome = await runStage(task, stage, attempt, retry);
      // A stop request ends the story as interrupted, not as an agent failure to retry.
      if (task.signal?.aborted) return interrupted(`the run was stopped during ${stage.id}, attempt ${attempt}`);
      if (outcome.passed) {
        index += 1;
        continue;
      }
      if (outcome.infrastructure) return { passed: false, attempt, failureClass: outcome.failureClass, reason: outcome.reason, infrastructure: true };
      failure = { failureClass: outcome.failureClass, reason: outcome.reason, stage: stage.id, evidence: outcome.evidence };
    } else {
      const rejected = options.accept ? await options.accept(attempt) : undefined;
      if (!rejected) return { passed: true, attempt };
      failure = { ...rejected, stage: stages.at(-1)?.id ?? retryStage, evidence: {} };
    }
    const at = task.clock().toISOString();
    const archiveDir = archiveAttempt(task.layout, attempt, { stage: failure.stage, failureClass: failure.failureClass, reason: failure.reason, at });
    await task.sink.emit({ kind: "attempt.archived", taskId: task.taskId, attempt, archiveDir });
    if (attempt >= task.maxAttempts) {
      const reason = `attempt ${attempt} of ${task.maxAttempts} failed at ${failure.stage} (${failure.failureClass}): ${failure.reason}`;
      // A weakened suite blocks under its own name: a writer's acceptance, not another attempt, is what it needs.
      const failureClass = BLOCKS_AS_ITSELF.has(failure.failureClass) ? failure.failureClass : "retry-ceiling";
      return { passed: false, attempt, failureClass, reason, infrastructure: false };
    }
    await task.sink.emit({
      kind: "retry.scheduled",
      taskId: task.taskId,
      failedAttempt: attempt,
      nextAttempt: attempt + 1,
      fromStage: failure.stage,
      retryStage,
      failureClass: failure.failureClass,
      reason: failure.reason,
    });
    retry = { attempt, stage: failure.stage, failureClass: failure.failureClass, reason: failure.reason, ...failure.evidence };
    attempt += 1;
    index = retryIndex;
  }
}
