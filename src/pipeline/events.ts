/**
 * The pipeline's one event model. Every step the coordinator takes is one of these events: it
 * is appended to `execution-history.ndjson` (validated against
 * `schemas/execution-history.schema.json`) and handed to the {@link Reporter}. Records the
 * harness writes use camelCase keys.
 */
import type { UnavailableReason } from "../agents/index.js";
import type { CleanCloneResult } from "../workspace/index.js";
import type { DeclaredCheck } from "./snapshot.js";

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
export interface StepPolicy {
  /** False when the operator set HARNESS_SANDBOX=off. */
  sandboxed: boolean;
  network: boolean;
}

interface EventBase {
  /** ISO-8601 time the event happened. */
  at: string;
}

export type HistoryEvent = EventBase &
  (
    /**
     * `taskId` names the story's one task when it has no plan; a story with a plan announces its
     * tasks with `task.planned`. `checks` are the check runs the workflow's stages declare.
     */
    | { kind: "run.started"; storyId: string; runId: string; taskId?: string; title: string; stages: string[]; maxAttempts: number; readmission: boolean; checks?: DeclaredCheck[]; unsandboxed?: true }
    /** A task of the story's plan: its wave (1-based), its declared files and what blocks it. */
    | { kind: "task.planned"; taskId: string; title: string; wave: number; files: string[]; blockedBy: string[]; stages: string[] }
    /** A task took a slot: its worktree is made and provisioned inside that slot. */
    | { kind: "task.started"; taskId: string; wave: number; attempt: number }
    /** A task left its slot; `commit` is its work when it completed, `kept` when an earlier run completed it. */
    | { kind: "task.finished"; taskId: string; outcome: "completed" | "blocked"; attempt: number; durationMs: number; commit?: string; failureClass?: FailureClass; detail?: string; kept?: boolean }
    | { kind: "wave.started"; wave: number; tasks: string[]; base: string }
    /** The wave's completed tasks merged onto the story branch, in plan order. */
    | { kind: "wave.merged"; wave: number; merged: string[]; commit: string }
    | { kind: "worktree.created"; taskId: string; worktree: string; branch: string; base: string }
    | { kind: "provision.succeeded"; taskId: string; cmd: string | null; durationMs: number; skipped: boolean; phase: string }
    | { kind: "provision.failed"; taskId: string; cmd: string | null; exitCode: number | null; logTail: string }
    | { kind: "baseline.finished"; taskId: string; command: string; commit: string; exitCode?: number; timedOut: boolean; outputTail: string; durationMs: number; policy?: StepPolicy }
    | { kind: "stage.started"; taskId: string; stage: string; attempt: number }
    | { kind: "seat.unavailable"; taskId: string; stage: string; attempt: number; command: string; reason: UnavailableReason; message: string; resetAt?: string }
    | { kind: "seat.parked"; taskId: string; stage: string; attempt: number; until: string }
    | { kind: "stage.finished"; taskId: string; stage: string; attempt: number; outcome: "passed" | "failed"; durationMs: number; failureClass?: FailureClass; detail?: string }
    | { kind: "gate.finished"; taskId: string; stage: string; attempt: number; command: string; exitCode?: number; timedOut: boolean; outputTail: string; durationMs: number; policy?: StepPolicy }
    | { kind: "verdict.recorded"; taskId: string; stage: string; attempt: number; verdict: "pass" | "fail"; findings: string[]; retryGuidance?: string }
    | { kind: "clean_clone.finished"; taskId: string; stage: string; attempt: number; artifact: string; result: CleanCloneRecord; policy?: StepPolicy }
    /** One round of a stage's fix ladder: the fixer seat worked on a failed gate or verdict; the stage runs again after it. */
    | { kind: "fix.finished"; taskId: string; stage: string; attempt: number; round: number; seat: string; fixing: FailureClass; outcome: "passed" | "failed"; durationMs: number; failureClass?: FailureClass; detail?: string }
    | { kind: "attempt.archived"; taskId: string; attempt: number; archiveDir: string }
    | { kind: "retry.scheduled"; taskId: string; failedAttempt: number; nextAttempt: number; fromStage: string; retryStage: string; failureClass: FailureClass; reason: string }
    | { kind: "story.completed"; taskId?: string; branch: string; commit: string }
    /** `commit` is the commit of the work so far on `branch`, when one was made (the App pushes it). */
    | { kind: "story.blocked"; taskId?: string; failureClass: FailureClass; detail: string; branch?: string; commit?: string; blockedTasks?: string[] }
  );

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
