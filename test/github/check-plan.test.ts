import { describe, expect, it } from "@jest/globals";
import { planChecks, RETRY_ACTION } from "../../src/github/report/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import {
  cleanClone,
  completedStory,
  gate,
  provisionBlockedStory,
  provisioned,
  replay,
  retryingStory,
  stageStarted,
  started,
  verdict,
  worktree,
} from "./story-events.js";

/** Reading order of the assertions below; the posting order is tested on its own. */
const READING_ORDER = ["harness / provision", "harness / verifier", "harness / clean-clone", "harness / story"];
const inReadingOrder = <T extends { name: string }>(checks: T[]): T[] =>
  [...checks].sort((a, b) => READING_ORDER.indexOf(a.name) - READING_ORDER.indexOf(b.name));
const states = (events: HistoryEvent[]): Array<[string, string, string | undefined, number]> =>
  inReadingOrder(planChecks(replay(events))).map((check) => [check.name, check.status, check.conclusion, check.attempt]);

describe("planChecks", () => {
  it("posts the story's own check run first, so it shows in progress soonest under GitHub's pacing", () => {
    expect(planChecks(replay([started()])).map((check) => check.name)).toEqual([
      "harness / story",
      "harness / provision",
      "harness / verifier",
      "harness / clean-clone",
    ]);
  });

  it("moves the checks from queued through in progress to completed", () => {
    expect(states([started()])).toEqual([
      ["harness / provision", "queued", undefined, 0],
      ["harness / verifier", "queued", undefined, 1],
      ["harness / clean-clone", "queued", undefined, 1],
      ["harness / story", "in_progress", undefined, 0],
    ]);
    expect(states([started(), worktree])[0]).toEqual(["harness / provision", "in_progress", undefined, 0]);
    const verifying = [started(), worktree, provisioned, stageStarted("verifier")];
    expect(states(verifying)[1]).toEqual(["harness / verifier", "in_progress", undefined, 1]);
    expect(states([...verifying, gate(1, 0), verdict(1, true)]).slice(1, 3)).toEqual([
      ["harness / verifier", "completed", "success", 1],
      ["harness / clean-clone", "in_progress", undefined, 1],
    ]);
    expect(states([...verifying, gate(1, 0), verdict(1, true), cleanClone(1, 0)])[2]).toEqual(["harness / clean-clone", "completed", "success", 1]);
    expect(states(completedStory()).map((state) => state[2])).toEqual(["success", "success", "success", "success"]);
  });

  it("blocks with action_required and a Retry button; checks that never ran are skipped", () => {
    const plan = inReadingOrder(planChecks(replay(provisionBlockedStory())));
    expect(plan.map((check) => [check.status, check.conclusion])).toEqual([
      ["completed", "failure"],
      ["completed", "skipped"],
      ["completed", "skipped"],
      ["completed", "action_required"],
    ]);
    expect(plan[3]?.actions).toEqual([{ label: "Retry", description: "Re-admit this story", identifier: "retry" }]);
    expect(RETRY_ACTION.label.length).toBeLessThanOrEqual(20);
    expect(RETRY_ACTION.description.length).toBeLessThanOrEqual(40);
  });

  it("plans the next attempt's gate checks as new, queued ones after a retry", () => {
    expect(states(retryingStory())).toEqual([
      ["harness / provision", "completed", "success", 0],
      ["harness / verifier", "queued", undefined, 2],
      ["harness / clean-clone", "queued", undefined, 2],
      ["harness / story", "in_progress", undefined, 0],
    ]);
    expect(states([...retryingStory(), gate(2, 1)])[1]).toEqual(["harness / verifier", "completed", "failure", 2]);
  });
});

describe("planChecks from the workflow's declared stages", () => {
  const at = "2026-01-01T00:00:00.000Z";
  it("names gate checks after the declaring stage, not after a stage id known to the code", () => {
    const start: HistoryEvent = {
      at,
      kind: "run.started",
      storyId: "7",
      runId: "r",
      taskId: "t1",
      title: "x",
      stages: ["build", "judge"],
      checks: [{ stage: "judge", kind: "gate" }],
      maxAttempts: 2,
      readmission: false,
    };
    const judged: HistoryEvent = { at, kind: "verdict.recorded", taskId: "t1", stage: "judge", attempt: 1, verdict: "pass", findings: [] };
    const plan = planChecks(replay([start, judged]));
    expect(plan.map((check) => check.name)).toEqual(["harness / story", "harness / provision", "harness / judge"]);
    expect(plan[2]).toMatchObject({ status: "completed", conclusion: "success" });
  });

  it("a start without declared checks (the runner's own report of a story that never ran) has only story and provision", () => {
    const start: HistoryEvent = { at, kind: "run.started", storyId: "7", runId: "r", title: "x", stages: ["a"], maxAttempts: 1, readmission: false };
    const blocked: HistoryEvent = { at, kind: "story.blocked", failureClass: "config-invalid", detail: "bad" };
    const snapshot = replay([start, blocked]);
    expect(snapshot.tasks).toEqual([]);
    expect(planChecks(snapshot).map((check) => [check.name, check.conclusion])).toEqual([
      ["harness / story", "action_required"],
      ["harness / provision", "skipped"],
    ]);
  });
});
