/**
 * What a stage kind is: its own run step, the options it takes beyond the workflow schema, the
 * artifacts it always requires and the check runs it declares. Each kind is one folder beside
 * this file and one line of the registry (`index.ts`).
 */
import type { CheckFailure } from "../check-results.js";
import type { RetryEvidence } from "../context.js";
import type { DeclaredCheck } from "../snapshot.js";
import type { TaskRun } from "../task.js";
import type { ArtifactSpec, RawStage, Stage } from "../workflow-types.js";

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

/** A failed stage outcome. */
export function failed(failure: CheckFailure, evidence: StageEvidence = {}, infrastructure = false): StageOutcome {
  return { passed: false, ...failure, infrastructure, evidence };
}

/** One run of one stage: the task it runs in, the attempt, and what the attempt before it left. */
export interface StageStep {
  task: TaskRun;
  stage: Stage;
  attempt: number;
  retry: RetryEvidence | undefined;
}

/** A workflow option a kind refuses: the field (relative to the stage) and why. */
export interface StageProblem {
  field: string;
  problem: string;
}

export interface StageKind {
  /** The `kind` a workflow stage names. */
  readonly name: string;
  /**
   * `task`: runs in a task's worktree (every task's, or once on the merged branch with
   * `scope: "story"`). `plan`: runs once before the tasks of a story that brings no plan of its
   * own, and produces the plan they run as.
   */
  readonly phase: "task" | "plan";
  /** True when the stage runs an agent seat: `seat` and `prompt` are then required, otherwise refused. */
  readonly seated: boolean;
  /** Artifacts the kind requires of its seat besides those the stage declares. */
  readonly artifacts: readonly ArtifactSpec[];
  /** The stage with the kind's defaults filled in (a review's `review.json` verdict, a gate's suite), before it loads. */
  normalize?(stage: RawStage): RawStage;
  /** The options of stage `index` this kind refuses (beyond what the workflow schema refuses). */
  validate(stage: RawStage, index: number): StageProblem | undefined;
  /** The check runs the stage declares. */
  checks(stage: Stage): DeclaredCheck[];
  /** Runs the stage once within an attempt (its own ladders included). */
  run(step: StageStep): Promise<StageOutcome>;
}
