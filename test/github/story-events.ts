/** Event sequences of typical stories, replayed through the real reducer. */
import { emptySnapshot, reduceSnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/events.js";

const at = "2026-01-01T00:00:00.000Z";
const taskId = "task-1";
export const STAGES = ["implementer", "tester", "verifier", "documenter"];

/** Applies events in order, as the coordinator does, and returns every intermediate snapshot too. */
export function replay(events: readonly HistoryEvent[]): StorySnapshot {
  return events.reduce(reduceSnapshot, emptySnapshot());
}

export const started = (readmission = false): HistoryEvent => ({
  at,
  kind: "run.started",
  storyId: "octo/repo#7",
  runId: "run-1",
  taskId,
  title: "Add a greeting",
  stages: STAGES,
  checks: [
    { stage: "verifier", kind: "gate" },
    { stage: "verifier", kind: "clean-clone" },
  ],
  maxAttempts: 3,
  readmission,
});
export const worktree: HistoryEvent = { at, kind: "worktree.created", taskId, worktree: "/tmp/w", branch: "harness/story-7", base: "main" };
export const provisioned: HistoryEvent = { at, kind: "provision.succeeded", taskId, cmd: "npm ci", durationMs: 1500, skipped: false, phase: "create" };
export const provisionFailed = (logTail: string): HistoryEvent => ({ at, kind: "provision.failed", taskId, cmd: "npm ci", exitCode: 1, logTail });
export const stageStarted = (stage: string, attempt = 1): HistoryEvent => ({ at, kind: "stage.started", taskId, stage, attempt });
export const stagePassed = (stage: string, attempt = 1, durationMs = 2000): HistoryEvent => ({
  at,
  kind: "stage.finished",
  taskId,
  stage,
  attempt,
  outcome: "passed",
  durationMs,
});
export const gate = (attempt: number, exitCode: number, outputTail = "ok"): HistoryEvent => ({
  at,
  kind: "gate.finished",
  taskId,
  stage: "verifier",
  attempt,
  command: "npm test",
  exitCode,
  timedOut: false,
  outputTail,
  durationMs: 800,
});
export const verdict = (attempt: number, pass: boolean): HistoryEvent => ({
  at,
  kind: "verdict.recorded",
  taskId,
  stage: "verifier",
  attempt,
  verdict: pass ? "pass" : "fail",
  findings: pass ? [] : ["greeting is not exported"],
});
export const cleanClone = (attempt: number, exitCode: number, outputTail = "1 passing"): HistoryEvent => ({
  at,
  kind: "clean_clone.finished",
  taskId,
  stage: "verifier",
  attempt,
  artifact: "clean-clone-result.json",
  result: { ran: true, command: "npm test", interpreter: "node", interpreterVersion: "v20.19.0", exitCode, outputTail, durationMs: 1200, commit: "abc1234" },
});
export const retry = (failedAttempt: number): HistoryEvent => ({
  at,
  kind: "retry.scheduled",
  taskId,
  failedAttempt,
  nextAttempt: failedAttempt + 1,
  fromStage: "verifier",
  retryStage: "implementer",
  failureClass: "clean-clone-failed",
  reason: "suite fails in a fresh clone: fixture.json is ignored",
});
export const blocked = (failureClass: "workspace-provision-failed" | "retry-ceiling", detail: string): HistoryEvent => ({
  at,
  kind: "story.blocked",
  taskId,
  failureClass,
  detail,
});
export const completed: HistoryEvent = { at, kind: "story.completed", taskId, branch: "harness/story-7", commit: "def5678" };

/** Attempt 1 passes verification but fails the clean clone; attempt 2 is running its implementer. */
export function retryingStory(): HistoryEvent[] {
  return [
    started(),
    worktree,
    provisioned,
    ...STAGES.slice(0, 2).flatMap((stage) => [stageStarted(stage), stagePassed(stage)]),
    stageStarted("verifier"),
    gate(1, 0),
    verdict(1, true),
    cleanClone(1, 1, "Error: ENOENT fixture.json"),
    { at, kind: "stage.finished", taskId, stage: "verifier", attempt: 1, outcome: "failed", durationMs: 3000, failureClass: "clean-clone-failed" },
    retry(1),
    stageStarted("implementer", 2),
  ];
}

/** A story whose provisioning fails terminally. */
export function provisionBlockedStory(logTail = "npm ERR! 404 Not Found"): HistoryEvent[] {
  return [started(), worktree, provisionFailed(logTail), blocked("workspace-provision-failed", "npm ci exited 1 twice")];
}

/** A story that passes everything on the first attempt. */
export function completedStory(): HistoryEvent[] {
  return [
    started(),
    worktree,
    provisioned,
    ...["implementer", "tester"].flatMap((stage) => [stageStarted(stage), stagePassed(stage)]),
    stageStarted("verifier"),
    gate(1, 0),
    verdict(1, true),
    cleanClone(1, 0),
    stagePassed("verifier"),
    stageStarted("documenter"),
    stagePassed("documenter"),
    completed,
  ];
}
