/**
 * The pipeline's one event model. Every step the coordinator takes is one of these events: it
 * is appended to `execution-history.ndjson` (validated against
 * `schemas/execution-history.schema.json`, generated from `event-schemas.ts`) and handed to the
 * {@link Reporter}. Records the harness writes use camelCase keys.
 */
import type { CleanCloneResult } from "../workspace/index.js";

export { FAILURE_CLASSES, type FailureClass } from "../failure/index.js";

/** The clean-clone result as recorded (the shape of the result file a stage declares with `clean_clone`); one definition, in workspace. */
export type CleanCloneRecord = CleanCloneResult;

export type { HistoryEvent, HistoryEventKind, StepPolicy } from "./event-schemas.js";
export { gateWhere } from "./gate-where.js";

export {
  emptySnapshot,
  reduceSnapshot,
  taskSnapshot,
  INTEGRATION_TASK,
  INTEGRATION_CLEAN_CLONE,
  type StageSnapshot,
  type StorySnapshot,
  type TaskSnapshot,
  type TaskState,
  type DeclaredCheck,
  type SeatUsageTotal,
} from "./snapshot.js";
import type { StorySnapshot } from "./snapshot.js";
import type { HistoryEvent } from "./event-schemas.js";

/**
 * Where the pipeline reports. The GitHub reporter turns events into check runs and the status
 * comment; the console reporter prints a line per step. A reporter that fails must not stop
 * the story: the coordinator logs its error and goes on.
 */
export interface Reporter {
  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void>;
}
