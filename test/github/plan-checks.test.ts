import { describe, expect, it } from "@jest/globals";
import { planChecks, renderStatusComment, taskCheckName } from "../../src/github/report/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import { replay } from "./story-events.js";

const at = "2026-01-01T00:00:00.000Z";
const sha = (n: number): string => String(n).repeat(40).slice(0, 40);
const start: HistoryEvent = {
  at,
  kind: "run.started",
  storyId: "7",
  runId: "r",
  title: "Three parts",
  stages: ["implementer", "verifier", "documenter"],
  checks: [
    { stage: "verifier", kind: "gate" },
    { stage: "verifier", kind: "clean-clone" },
  ],
  maxAttempts: 2,
  readmission: false,
};
const planned = (taskId: string, wave: number, blockedBy: string[] = []): HistoryEvent => ({
  at,
  kind: "task.planned",
  taskId,
  title: `Part ${taskId}`,
  wave,
  files: [`src/${taskId}.txt`],
  blockedBy,
  stages: ["implementer", "verifier"],
});
const plan: HistoryEvent[] = [
  start,
  planned("a", 1),
  planned("b", 1),
  planned("c", 2, ["a", "b"]),
  {
    at,
    kind: "task.planned",
    taskId: "integration",
    title: "Merged story branch",
    wave: 0,
    files: [],
    blockedBy: ["a", "b", "c"],
    stages: ["clean-clone", "documenter"],
  },
  { at, kind: "wave.started", wave: 1, tasks: ["a", "b"], base: sha(1) },
  { at, kind: "task.started", taskId: "a", wave: 1, attempt: 1 },
  { at, kind: "task.started", taskId: "b", wave: 1, attempt: 1 },
  { at, kind: "stage.started", taskId: "a", stage: "implementer", attempt: 1 },
  { at, kind: "task.finished", taskId: "b", outcome: "blocked", attempt: 2, durationMs: 4000, failureClass: "retry-ceiling", detail: "agent exited 5" },
];

describe("check runs and the status comment of a story with a plan", () => {
  it("show one check run per task beside the story's, with the Retry button on a blocked task", () => {
    const checks = planChecks(replay(plan));
    expect(checks.map((check) => [check.name, check.status, check.conclusion])).toEqual([
      ["harness / story", "in_progress", undefined],
      ["harness / task a: Part a", "in_progress", undefined],
      ["harness / task b: Part b", "completed", "action_required"],
      ["harness / task c: Part c", "queued", undefined],
      ["harness / clean-clone", "queued", undefined],
    ]);
    expect(checks[2]?.actions).toEqual([{ label: "Retry", description: "Re-admit this story", identifier: "retry" }]);
    expect(checks[2]?.output.summary).toContain("**Failure class:** `retry-ceiling`");
    expect(checks[1]?.output.summary).toContain("| implementer | ⏳ running | 1 | – |");
    expect(taskCheckName({ id: "x", title: "y".repeat(300) }).length).toBeLessThanOrEqual(100);
  });

  it("draw the waves as a table: task, wave, state, attempt, duration", () => {
    const comment = renderStatusComment(replay(plan));
    expect(comment).toContain(
      [
        "| Task | Wave | State | Attempt | Duration |",
        "| --- | --- | --- | --- | --- |",
        "| a: Part a | 1 | ⏳ running | 1 | – |",
        "| b: Part b | 1 | ⛔ blocked | 2 | 4.0 s |",
        "| c: Part c | 2 | ⏸️ pending | – | – |",
      ].join("\n"),
    );
    const ended = replay([...plan, { at, kind: "story.blocked", failureClass: "retry-ceiling", detail: "1 of 3 tasks blocked", blockedTasks: ["b", "c"] }]);
    expect(renderStatusComment(ended)).toContain("**Blocked tasks:** `b`, `c`");
  });
});
