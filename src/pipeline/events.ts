/**
 * The pipeline's one event model. Every step the coordinator takes is one of these events: it
 * is appended to `execution-history.ndjson` (validated against
 * `schemas/execution-history.schema.json`, generated from `event-schemas.ts`) and handed to the
 * {@link Reporter}. Records the harness writes use camelCase keys.
 */
import type { Static } from "@sinclair/typebox";
import type { HistoryEventSchema, StepPolicySchema } from "./event-schemas.js";
import type { CleanCloneResult } from "../workspace/index.js";

/**
 * Every failure class, in one list: {@link FailureClass} is derived from it, the journal schema's
 * enum, the advice texts and the README's table are checked against it. Every error class's
 * `failureClass` is one of these.
 */
export const FAILURE_CLASSES = [
  "workspace-provision-failed",
  "retry-ceiling",
  "clean-clone-not-run",
  "clean-clone-failed",
  "suite-failed",
  "verdict-fail",
  "agent-exit",
  "agent-timeout",
  "artifact-missing",
  "artifact-invalid",
  "config-invalid",
  "interrupted",
  "internal-error",
  // Infrastructure and admission classes (blocked outside the attempt ladder unless noted).
  "environment",
  "baseline-red",
  "agent-unavailable",
  "push-refused",
  "base-conflict",
  // Attempt failures of a task in a plan.
  "scope-violation",
  "blocked-by-dependency",
  // Classes of the typed errors the rooms below the pipeline throw.
  "git-failed",
  "schema-invalid",
  "clean-clone-interpreter",
  "clean-clone-build-failed",
  "usage",
] as const;

/** Why a step failed or a story stopped; every blocked story names one. */
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** The clean-clone result as recorded (the shape of the result file a stage declares with `clean_clone`); one definition, in workspace. */
export type CleanCloneRecord = CleanCloneResult;

/** The policy a step that ran repository code ran under. */
export type StepPolicy = Static<typeof StepPolicySchema>;

/**
 * One line of the journal. Each kind is defined once, in `event-schemas.ts` (TypeBox); this
 * type and `schemas/execution-history.schema.json` both come from there.
 */
export type HistoryEvent = Static<typeof HistoryEventSchema>;

export type HistoryEventKind = HistoryEvent["kind"];

export { emptySnapshot, reduceSnapshot, taskSnapshot, INTEGRATION_TASK, INTEGRATION_CLEAN_CLONE, type StageSnapshot, type StorySnapshot, type TaskSnapshot, type TaskState, type DeclaredCheck } from "./snapshot.js";
import type { StorySnapshot } from "./snapshot.js";

/**
 * Where the pipeline reports. The GitHub reporter turns events into check runs and the status
 * comment; the console reporter prints a line per step. A reporter that fails must not stop
 * the story: the coordinator logs its error and goes on.
 */
export interface Reporter {
  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void>;
}
