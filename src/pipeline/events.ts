/**
 * The pipeline's one event model. Every step the coordinator takes is one of these events: it
 * is appended to `execution-history.ndjson` (validated against
 * `schemas/execution-history.schema.json`) and handed to the {@link Reporter}. Records the
 * harness writes use camelCase keys.
 */
import type { CleanCloneResult } from "../workspace/index.js";

/** Why a step failed or a story stopped; every blocked story names one. */
export type FailureClass =
  | "workspace-provision-failed"
  | "retry-ceiling"
  | "clean-clone-not-run"
  | "clean-clone-failed"
  | "suite-failed"
  | "verdict-fail"
  | "agent-exit"
  | "agent-timeout"
  | "artifact-missing"
  | "artifact-invalid"
  | "config-invalid"
  | "interrupted"
  | "internal-error"
  // Infrastructure and admission classes (blocked outside the attempt ladder unless noted).
  | "environment"
  | "baseline-red"
  | "agent-unavailable"
  | "push-refused"
  | "base-conflict"
  // Attempt failures of a task in a plan.
  | "scope-violation"
  | "blocked-by-dependency";

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
    | { kind: "run.started"; storyId: string; runId: string; taskId: string; title: string; stages: string[]; maxAttempts: number; readmission: boolean; unsandboxed?: true }
    | { kind: "worktree.created"; taskId: string; worktree: string; branch: string; base: string }
    | { kind: "provision.succeeded"; taskId: string; cmd: string | null; durationMs: number; skipped: boolean; phase: string }
    | { kind: "provision.failed"; taskId: string; cmd: string | null; exitCode: number | null; logTail: string }
    | { kind: "stage.started"; taskId: string; stage: string; attempt: number }
    | { kind: "stage.finished"; taskId: string; stage: string; attempt: number; outcome: "passed" | "failed"; durationMs: number; failureClass?: FailureClass; detail?: string }
    | { kind: "gate.finished"; taskId: string; stage: string; attempt: number; command: string; exitCode?: number; timedOut: boolean; outputTail: string; durationMs: number; policy?: StepPolicy }
    | { kind: "verdict.recorded"; taskId: string; stage: string; attempt: number; verdict: "pass" | "fail"; findings: string[]; retryGuidance?: string }
    | { kind: "clean_clone.finished"; taskId: string; stage: string; attempt: number; artifact: string; result: CleanCloneRecord; policy?: StepPolicy }
    | { kind: "attempt.archived"; taskId: string; attempt: number; archiveDir: string }
    | { kind: "retry.scheduled"; taskId: string; failedAttempt: number; nextAttempt: number; fromStage: string; retryStage: string; failureClass: FailureClass; reason: string }
    | { kind: "story.completed"; taskId: string; branch: string; commit: string }
    /** `commit` is the commit of the work so far on `branch`, when one was made (the App pushes it). */
    | { kind: "story.blocked"; taskId: string; failureClass: FailureClass; detail: string; branch?: string; commit?: string }
  );

export type HistoryEventKind = HistoryEvent["kind"];

/** State of one stage as a reader of the status comment sees it. */
export interface StageSnapshot {
  id: string;
  state: "pending" | "running" | "passed" | "failed";
  attempt: number;
  durationMs?: number;
}

/** Everything a renderer needs to draw the story's state; derived from events by {@link reduceSnapshot}. */
export interface StorySnapshot {
  storyId: string;
  runId: string;
  title: string;
  taskId: string;
  maxAttempts: number;
  attempt: number;
  stages: StageSnapshot[];
  outcome: "running" | "completed" | "blocked";
  /** True when the run's repository code ran with the sandbox switched off. */
  unsandboxed?: boolean;
  provision?: { state: "passed" | "failed"; cmd: string | null; durationMs?: number; exitCode?: number | null; logTail?: string };
  lastGate?: Extract<HistoryEvent, { kind: "gate.finished" }>;
  lastVerdict?: Extract<HistoryEvent, { kind: "verdict.recorded" }>;
  cleanClone?: Extract<HistoryEvent, { kind: "clean_clone.finished" }>;
  /** Why the previous attempt was sent back, while a retry runs. */
  lastRetry?: Extract<HistoryEvent, { kind: "retry.scheduled" }>;
  failureClass?: FailureClass;
  detail?: string;
  commit?: string;
  branch?: string;
}

/** The snapshot before any event. */
export function emptySnapshot(): StorySnapshot {
  return { storyId: "", runId: "", title: "", taskId: "", maxAttempts: 0, attempt: 1, stages: [], outcome: "running" };
}

/** Applies one event to a snapshot; pure, so renderers and tests can replay a journal. */
export function reduceSnapshot(snapshot: StorySnapshot, event: HistoryEvent): StorySnapshot {
  const next: StorySnapshot = { ...snapshot, stages: snapshot.stages.map((stage) => ({ ...stage })) };
  const stage = (id: string): StageSnapshot | undefined => next.stages.find((candidate) => candidate.id === id);
  switch (event.kind) {
    case "run.started":
      return {
        ...emptySnapshot(),
        storyId: event.storyId,
        runId: event.runId,
        title: event.title,
        taskId: event.taskId,
        maxAttempts: event.maxAttempts,
        stages: event.stages.map((id) => ({ id, state: "pending", attempt: 0 })),
        ...(event.unsandboxed ? { unsandboxed: true } : {}),
      };
    case "worktree.created":
      next.taskId = event.taskId;
      next.branch = event.branch;
      return next;
    case "provision.succeeded":
      next.provision = { state: "passed", cmd: event.cmd, durationMs: event.durationMs };
      return next;
    case "provision.failed":
      next.provision = { state: "failed", cmd: event.cmd, exitCode: event.exitCode, logTail: event.logTail };
      return next;
    case "stage.started": {
      next.attempt = event.attempt;
      const target = stage(event.stage);
      if (target) Object.assign(target, { state: "running", attempt: event.attempt, durationMs: undefined });
      return next;
    }
    case "stage.finished": {
      const target = stage(event.stage);
      if (target) Object.assign(target, { state: event.outcome, attempt: event.attempt, durationMs: event.durationMs });
      return next;
    }
    case "gate.finished":
      next.lastGate = event;
      return next;
    case "verdict.recorded":
      next.lastVerdict = event;
      return next;
    case "clean_clone.finished":
      next.cleanClone = event;
      return next;
    case "attempt.archived":
      return next;
    case "retry.scheduled": {
      next.lastRetry = event;
      next.attempt = event.nextAttempt;
      // Stages from the retry stage onward run again.
      const from = next.stages.findIndex((candidate) => candidate.id === event.retryStage);
      next.stages.forEach((candidate, index) => {
        if (from >= 0 && index >= from) candidate.state = "pending";
      });
      return next;
    }
    case "story.completed":
      return { ...next, outcome: "completed", commit: event.commit, branch: event.branch };
    case "story.blocked":
      return {
        ...next,
        outcome: "blocked",
        failureClass: event.failureClass,
        detail: event.detail,
        ...(event.commit !== undefined ? { commit: event.commit } : {}),
        ...(event.branch !== undefined ? { branch: event.branch } : {}),
      };
  }
}

/**
 * Where the pipeline reports. The GitHub reporter turns events into check runs and the status
 * comment; the console reporter prints a line per step. A reporter that fails must not stop
 * the story: the coordinator logs its error and goes on.
 */
export interface Reporter {
  onEvent(event: HistoryEvent, snapshot: StorySnapshot): Promise<void>;
}
