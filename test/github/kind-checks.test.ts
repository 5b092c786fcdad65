import { describe, expect, it } from "@jest/globals";
import { planChecks } from "../../src/github/report/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import { replay } from "./story-events.js";

const at = "2026-01-01T00:00:00.000Z";
const taskId = "task-1";
const start: HistoryEvent = {
  at,
  kind: "run.started",
  storyId: "7",
  runId: "r",
  taskId,
  title: "Kinds",
  stages: ["implementer", "look", "suite", "fresh"],
  checks: [
    { stage: "look", kind: "review" },
    { stage: "suite", kind: "gate" },
    { stage: "fresh", kind: "clean-clone" },
  ],
  maxAttempts: 1,
  readmission: false,
};
const verdict = (pass: boolean): HistoryEvent => ({
  at,
  kind: "verdict.recorded",
  taskId,
  stage: "look",
  attempt: 1,
  verdict: pass ? "pass" : "fail",
  findings: pass ? [] : ["no test"],
});
const gate: HistoryEvent = {
  at,
  kind: "gate.finished",
  taskId,
  stage: "suite",
  attempt: 1,
  command: "npm test",
  exitCode: 0,
  timedOut: false,
  outputTail: "ok",
  durationMs: 5,
};
const phases = (events: HistoryEvent[]) => planChecks(replay(events)).map((check) => [check.name, check.status, check.conclusion ?? null, check.output.title]);

describe("check runs of the review, gate and clean-clone kinds", () => {
  it("each stage its own: a review by its verdict (looked at again after a fix), a gate done once its suite passed, a clean clone once its stage runs", () => {
    const events: HistoryEvent[] = [
      start,
      { at, kind: "stage.started", taskId, stage: "look", attempt: 1 },
      verdict(false),
      { at, kind: "fix.finished", taskId, stage: "look", attempt: 1, round: 1, seat: "fixer", fixing: "verdict-fail", outcome: "passed", durationMs: 3 },
    ];
    expect(phases(events).slice(2)).toEqual([
      ["harness / look", "completed", "failure", "Attempt 1: verdict fail"],
      ["harness / suite", "queued", null, "Attempt 1: waiting"],
      ["harness / clean-clone", "queued", null, expect.any(String)],
    ]);
    events.push(
      verdict(true),
      { at, kind: "stage.finished", taskId, stage: "look", attempt: 1, outcome: "passed", durationMs: 9 },
      { at, kind: "stage.started", taskId, stage: "suite", attempt: 1 },
      gate,
    );
    expect(phases(events)[2]).toEqual(["harness / look", "completed", "success", "Attempt 1: verdict pass"]);
    expect(phases(events)[3]).toEqual(["harness / suite", "in_progress", null, "Attempt 1: suite passed, suite running"]);
    events.push(
      { at, kind: "stage.finished", taskId, stage: "suite", attempt: 1, outcome: "passed", durationMs: 9 },
      { at, kind: "stage.started", taskId, stage: "fresh", attempt: 1 },
    );
    expect(phases(events).slice(3)).toEqual([
      ["harness / suite", "completed", "success", "Attempt 1: suite passed"],
      ["harness / clean-clone", "in_progress", null, expect.any(String)],
    ]);
  });
});
