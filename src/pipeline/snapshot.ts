/**
 * The story's state as renderers see it, derived from the journal by {@link reduceSnapshot}.
 * The task is the unit: every event that names a task updates that task's slice (its stages,
 * attempts, provisioning, gates, verdicts, clean-clone results, outcome). A story without a
 * plan has one task, announced by `run.started`; the story-level fields (`stages`, `attempt`,
 * `lastRetry`) then mirror it, and it ends with the story.
 */
import type { FailureClass } from "../failure/index.js";
import type { HistoryEvent } from "./event-schemas.js";

/** The task id of a planned story's integration step after the last wave (wave 0 in the snapshot). */
export const INTEGRATION_TASK = "integration";
/** The integration step's stage that runs the story-level clean-clone check on the merged branch. */
export const INTEGRATION_CLEAN_CLONE = "clean-clone";

/** A check run a workflow stage declares: a verification gate or review, a clean-clone check, or a planner's plan. */
export interface DeclaredCheck {
  stage: string;
  kind: "gate" | "review" | "clean-clone" | "plan" | "integrity";
}

/** State of one stage as a reader of the status comment sees it. */
export interface StageSnapshot {
  id: string;
  state: "pending" | "running" | "passed" | "failed";
  attempt: number;
  durationMs?: number;
}

export type TaskState = "pending" | "running" | "completed" | "blocked";
type GateEvent = Extract<HistoryEvent, { kind: "gate.finished" }>;
type VerdictEvent = Extract<HistoryEvent, { kind: "verdict.recorded" }>;
type CleanCloneEvent = Extract<HistoryEvent, { kind: "clean_clone.finished" }>;
type RetryEvent = Extract<HistoryEvent, { kind: "retry.scheduled" }>;
type BaselineEvent = Extract<HistoryEvent, { kind: "baseline.finished" }>;
type ParkedEvent = Extract<HistoryEvent, { kind: "seat.parked" }>;
/** One run of the test-integrity gate, as journaled. */
export type IntegrityEvent = Extract<HistoryEvent, { kind: "integrity.finished" }>;

/** One task's slice of the story. */
export interface TaskSnapshot {
  id: string;
  title: string;
  /** 1-based dependency level; 0 for the story's integration step after the last wave. */
  wave: number;
  files: string[];
  blockedBy: string[];
  state: TaskState;
  /** "running" until the task (or, for a story's only task, the story) ended. */
  outcome: "running" | "completed" | "blocked";
  maxAttempts: number;
  attempt: number;
  stages: StageSnapshot[];
  provision?: { state: "passed" | "failed"; cmd: string | null; durationMs?: number; exitCode?: number | null; logTail?: string };
  /** The latest gate run, verdict and clean-clone result of each stage. */
  gates: Record<string, GateEvent>;
  verdicts: Record<string, VerdictEvent>;
  cleanClones: Record<string, CleanCloneEvent>;
  /** The latest test-integrity gate of each integrity stage (absent before the first). */
  integrity?: Record<string, IntegrityEvent>;
  /** The suite on the task's base commit, before any agent. */
  baseline?: BaselineEvent;
  /** The seat waiting for a rate limit to reset, while it waits. */
  parked?: ParkedEvent;
  lastRetry?: RetryEvent;
  failureClass?: FailureClass;
  detail?: string;
  commit?: string;
  durationMs?: number;
  /** Completed by an earlier run of the story; its work is already on the branch. */
  kept?: boolean;
  /** What each seat's agents spent in this run, summed over its launches (attempts, fix rounds, re-runs). */
  usage?: Record<string, SeatUsageTotal>;
  /** What the whole story's agents spent across its runs, as of the task's latest launch. */
  storySpent?: { runs: number; tokens: number; agentMs: number };
}

/** A seat's spending, summed over its launches. */
export interface SeatUsageTotal {
  launches: number;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
}

/** Everything a renderer needs to draw the story's state. */
export interface StorySnapshot {
  storyId: string;
  runId: string;
  title: string;
  maxAttempts: number;
  /** The story's progress view: its only task's attempt and stages, or the story-level stages of a plan. */
  attempt: number;
  stages: StageSnapshot[];
  lastRetry?: RetryEvent;
  /** The check runs the workflow declares, from `run.started`. */
  checks: DeclaredCheck[];
  /** True once a plan announced its tasks. */
  planned: boolean;
  tasks: TaskSnapshot[];
  outcome: "running" | "completed" | "blocked";
  /** True when the run's repository code ran with the sandbox switched off. */
  unsandboxed?: boolean;
  /** How the run's networked steps reached the network (absent in journals older than the network namespace). */
  network?: "own" | "egress" | "host";
  failureClass?: FailureClass;
  detail?: string;
  blockedTasks?: string[];
  commit?: string;
  branch?: string;
}

/** The snapshot before any event. */
export function emptySnapshot(): StorySnapshot {
  return { storyId: "", runId: "", title: "", maxAttempts: 0, attempt: 1, stages: [], checks: [], planned: false, tasks: [], outcome: "running" };
}

const pendingStages = (ids: readonly string[]): StageSnapshot[] => ids.map((id) => ({ id, state: "pending", attempt: 0 }));

function newTask(snapshot: StorySnapshot, id: string, stages: readonly string[]): TaskSnapshot {
  return {
    id,
    title: snapshot.title,
    wave: 1,
    files: [],
    blockedBy: [],
    state: "pending",
    outcome: "running",
    maxAttempts: snapshot.maxAttempts,
    attempt: 1,
    stages: pendingStages(stages),
    gates: {},
    verdicts: {},
    cleanClones: {},
  };
}

/** The task `taskId` of a snapshot, or (without an id) its first task. */
export function taskSnapshot(snapshot: StorySnapshot, taskId?: string): TaskSnapshot | undefined {
  return taskId === undefined ? snapshot.tasks[0] : snapshot.tasks.find((task) => task.id === taskId);
}

function copy(snapshot: StorySnapshot): StorySnapshot {
  return {
    ...snapshot,
    stages: snapshot.stages.map((stage) => ({ ...stage })),
    tasks: snapshot.tasks.map((task) => ({
      ...task,
      stages: task.stages.map((stage) => ({ ...stage })),
      gates: { ...task.gates },
      verdicts: { ...task.verdicts },
      cleanClones: { ...task.cleanClones },
      ...(task.integrity ? { integrity: { ...task.integrity } } : {}),
    })),
  };
}

/** Applies one event to a snapshot; pure, so renderers and tests can replay a journal. */
export function reduceSnapshot(snapshot: StorySnapshot, event: HistoryEvent): StorySnapshot {
  if (event.kind === "run.started") {
    const next: StorySnapshot = {
      ...emptySnapshot(),
      storyId: event.storyId,
      runId: event.runId,
      title: event.title,
      maxAttempts: event.maxAttempts,
      stages: pendingStages(event.stages),
      checks: (event.checks ?? []).map((check) => ({ ...check })),
      ...(event.unsandboxed ? { unsandboxed: true } : {}),
      ...(event.network !== undefined ? { network: event.network } : {}),
    };
    if (event.taskId !== undefined) next.tasks.push(newTask(next, event.taskId, event.stages));
    return next;
  }
  const next = copy(snapshot);
  if (event.kind === "story.completed" || event.kind === "story.blocked") return endStory(next, event);
  if (event.kind === "wave.started" || event.kind === "wave.merged") return next;
  if (event.kind === "task.planned") {
    // The one task `run.started` announced: the story has no plan, and its task is already there.
    if (!next.planned && taskSnapshot(next, event.taskId)) return next;
    next.planned = true;
    const task = {
      ...newTask(next, event.taskId, event.stages),
      title: event.title,
      wave: event.wave,
      files: [...event.files],
      blockedBy: [...event.blockedBy],
    };
    next.tasks = [...next.tasks.filter((candidate) => candidate.id !== event.taskId), task];
    return next;
  }
  // A story without a plan ends its one task with the story's own end, which follows at once.
  if (event.kind === "task.finished" && !next.planned) return next;
  let task = taskSnapshot(next, event.taskId);
  if (!task) {
    task = newTask(
      next,
      event.taskId,
      next.stages.map((stage) => stage.id),
    );
    next.tasks.push(task);
  }
  applyToTask(task, event);
  // A story without a plan is its one task: the story's progress view follows it.
  if (!next.planned || task.wave === 0) mirror(next, task, event);
  return next;
}

type TaskEvent = Exclude<HistoryEvent, { kind: "run.started" | "story.completed" | "story.blocked" | "task.planned" | "wave.started" | "wave.merged" }>;

function applyToTask(task: TaskSnapshot, event: TaskEvent): void {
  const stage = (id: string): StageSnapshot | undefined => task.stages.find((candidate) => candidate.id === id);
  switch (event.kind) {
    case "task.started":
      Object.assign(task, { state: "running", attempt: event.attempt });
      return;
    case "task.finished":
      Object.assign(task, { state: event.outcome, outcome: event.outcome, attempt: event.attempt, durationMs: event.durationMs });
      if (event.commit !== undefined) task.commit = event.commit;
      if (event.failureClass !== undefined) task.failureClass = event.failureClass;
      if (event.detail !== undefined) task.detail = event.detail;
      if (event.kept) task.kept = true;
      return;
    case "worktree.created":
      if (task.state === "pending") task.state = "running";
      return;
    case "provision.succeeded":
      task.provision = { state: "passed", cmd: event.cmd, durationMs: event.durationMs };
      return;
    case "provision.failed":
      task.provision = { state: "failed", cmd: event.cmd, exitCode: event.exitCode, logTail: event.logTail };
      return;
    case "stage.started": {
      task.state = "running";
      task.attempt = event.attempt;
      const target = stage(event.stage);
      if (target) Object.assign(target, { state: "running", attempt: event.attempt, durationMs: undefined });
      return;
    }
    case "stage.finished": {
      const target = stage(event.stage);
      if (target) Object.assign(target, { state: event.outcome, attempt: event.attempt, durationMs: event.durationMs });
      delete task.parked;
      return;
    }
    case "baseline.finished":
      task.baseline = event;
      return;
    case "seat.unavailable":
    case "baseline.started":
      return;
    case "seat.usage": {
      const usage = (task.usage ??= {});
      const total = (usage[event.stage] ??= { launches: 0, turns: 0, inputTokens: 0, outputTokens: 0, durationMs: 0 });
      total.launches += 1;
      total.turns += event.turns;
      total.inputTokens += event.inputTokens;
      total.outputTokens += event.outputTokens;
      total.durationMs += event.durationMs;
      if (event.story !== undefined) task.storySpent = event.story;
      return;
    }
    case "seat.parked":
      task.parked = event;
      return;
    case "gate.finished":
      task.gates[event.stage] = event;
      return;
    case "verdict.recorded":
      task.verdicts[event.stage] = event;
      return;
    case "clean_clone.finished":
      task.cleanClones[event.stage] = event;
      return;
    case "integrity.finished":
      task.integrity = { ...task.integrity, [event.stage]: event };
      return;
    case "attempt.archived":
    case "fix.finished":
      return;
    case "retry.scheduled":
      task.lastRetry = event;
      task.attempt = event.nextAttempt;
      resetFrom(task.stages, event.retryStage);
      return;
  }
}

/** Stages from the retry stage onward run again. */
function resetFrom(stages: StageSnapshot[], retryStage: string): void {
  const from = stages.findIndex((candidate) => candidate.id === retryStage);
  stages.forEach((candidate, index) => {
    if (from >= 0 && index >= from) candidate.state = "pending";
  });
}

function mirror(story: StorySnapshot, task: TaskSnapshot, event: TaskEvent): void {
  if (event.kind === "stage.started" || event.kind === "stage.finished") {
    story.attempt = event.attempt;
    const target = story.stages.find((candidate) => candidate.id === event.stage);
    if (target) {
      const state = event.kind === "stage.started" ? "running" : event.outcome;
      Object.assign(target, { state, attempt: event.attempt, durationMs: event.kind === "stage.finished" ? event.durationMs : undefined });
    }
  } else if (event.kind === "retry.scheduled") {
    story.lastRetry = event;
    story.attempt = task.attempt;
    resetFrom(story.stages, event.retryStage);
  }
}

function endStory(next: StorySnapshot, event: Extract<HistoryEvent, { kind: "story.completed" | "story.blocked" }>): StorySnapshot {
  const outcome = event.kind === "story.completed" ? "completed" : "blocked";
  // The tasks still running end with the story (a story without a plan: its task is the story).
  for (const task of next.tasks) {
    if (task.outcome !== "running") continue;
    task.outcome = outcome;
    if (task.state === "running" || !next.planned) task.state = outcome;
    if (event.kind === "story.blocked" && (!next.planned || event.taskId === task.id)) {
      task.failureClass = event.failureClass;
      task.detail = event.detail;
    }
  }
  if (event.kind === "story.completed") return { ...next, outcome, commit: event.commit, branch: event.branch };
  return {
    ...next,
    outcome,
    failureClass: event.failureClass,
    detail: event.detail,
    ...(event.blockedTasks !== undefined ? { blockedTasks: [...event.blockedTasks] } : {}),
    ...(event.commit !== undefined ? { commit: event.commit } : {}),
    ...(event.branch !== undefined ? { branch: event.branch } : {}),
  };
}
