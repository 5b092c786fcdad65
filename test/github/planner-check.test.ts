import { beforeAll, describe, expect, it } from "@jest/globals";
import { CHECK_RUN_OUTPUT_MAX_BYTES } from "../../src/github/index.js";
import { GitHubReporter, planChecks, renderPlannerCheck } from "../../src/github/report/index.js";
import { emptySnapshot, reduceSnapshot, type HistoryEvent } from "../../src/pipeline/events.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { NAME, openStoryPull, OWNER, RecordingLog } from "./fake-setup.js";
import { replay } from "./story-events.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const at = "2026-01-01T00:00:00.000Z";
const start: HistoryEvent = {
  at,
  kind: "run.started",
  storyId: "7",
  runId: "r",
  title: "Three parts",
  stages: ["planner", "implementer", "verifier"],
  checks: [
    { stage: "planner", kind: "plan" },
    { stage: "verifier", kind: "gate" },
  ],
  maxAttempts: 2,
  readmission: false,
};
const task = (taskId: string, wave: number, title = `Part ${taskId}`, blockedBy: string[] = []): HistoryEvent => ({
  at,
  kind: "task.planned",
  taskId,
  title,
  wave,
  files: [`src/${taskId}.txt`],
  blockedBy,
  stages: wave === 0 ? ["planner"] : ["implementer", "verifier"],
});
const planning: HistoryEvent[] = [
  start,
  task("planner", 0, "Plan the story"),
  { at, kind: "task.started", taskId: "planner", wave: 0, attempt: 1 },
  { at, kind: "stage.started", taskId: "planner", stage: "planner", attempt: 1 },
  {
    at,
    kind: "stage.finished",
    taskId: "planner",
    stage: "planner",
    attempt: 1,
    outcome: "failed",
    durationMs: 900,
    failureClass: "artifact-invalid",
    detail: "cycle of blocked_by: a → b → a",
  },
  {
    at,
    kind: "retry.scheduled",
    taskId: "planner",
    failedAttempt: 1,
    nextAttempt: 2,
    fromStage: "planner",
    retryStage: "planner",
    failureClass: "artifact-invalid",
    reason: "cycle of blocked_by: a → b → a",
  },
  { at, kind: "stage.started", taskId: "planner", stage: "planner", attempt: 2 },
];
const planned: HistoryEvent[] = [
  ...planning,
  { at, kind: "stage.finished", taskId: "planner", stage: "planner", attempt: 2, outcome: "passed", durationMs: 800 },
  { at, kind: "task.finished", taskId: "planner", outcome: "completed", attempt: 2, durationMs: 2000 },
  task("a", 1, "Greeting @octo-org/admins <img src=x> #1"),
  task("b", 1),
  task("c", 2, "Part c", ["a", "b"]),
];
const plannerCheck = (events: readonly HistoryEvent[]) => planChecks(replay(events)).find((check) => check.name === "harness / planner");

describe("the planner stage's check run", () => {
  it("is queued, then in progress through its attempts, then succeeds showing the plan; beside the story's and the tasks'", () => {
    expect(plannerCheck([start])).toMatchObject({ status: "queued", output: { title: "Waiting" } });
    const running = plannerCheck(planning);
    expect(running).toMatchObject({ status: "in_progress", output: { title: "Attempt 2/2 planning" } });
    expect(running?.output.summary).toContain("### Attempt 1 was sent back (`artifact-invalid`)");
    expect(running?.output.summary).toContain("cycle of blocked_by: a → b → a");
    const done = plannerCheck(planned);
    expect(done).toMatchObject({ status: "completed", conclusion: "success", output: { title: "Planned 3 tasks in 2 waves (attempt 2/2)" } });
    expect(done?.output.summary).toContain("| `c` | Part c | 2 | `src/c.txt` | `a`, `b` |");
    // The plan is an agent's text: no mention, image or issue reference survives.
    expect(done?.output.summary).toContain("Greeting @\u200bocto-org/admins \\<img src=x\\> \\#\u200b1");
    expect(done?.output.summary).not.toMatch(/@octo-org|[^\\]<img/);
    expect(planChecks(replay(planned)).map((check) => check.name)).toEqual([
      "harness / story",
      "harness / planner",
      "harness / task a: Greeting @octo-org/admins <img src=x> #1",
      "harness / task b: Part b",
      "harness / task c: Part c",
      "harness / clean-clone",
    ]);
  });

  it("fails with the class and what to do when no plan was accepted, and is skipped when the story brings its own plan", () => {
    const blocked = plannerCheck([
      ...planning,
      {
        at,
        kind: "task.finished",
        taskId: "planner",
        outcome: "blocked",
        attempt: 2,
        durationMs: 2000,
        failureClass: "retry-ceiling",
        detail: "attempt 2 of 2 failed at planner",
      },
    ]);
    expect(blocked).toMatchObject({ status: "completed", conclusion: "failure", output: { title: "Blocked: retry-ceiling" } });
    expect(blocked?.output.summary).toContain("**What to do:**");
    expect(plannerCheck([start, task("a", 1), task("b", 1)])).toMatchObject({
      status: "completed",
      conclusion: "skipped",
      output: { title: "Skipped: the story brings its own plan" },
    });
    expect(plannerCheck([start, { at, kind: "story.blocked", failureClass: "config-invalid", detail: "bad" }])).toMatchObject({
      status: "completed",
      conclusion: "skipped",
      output: { title: "Did not run" },
    });
  });

  it("stays within GitHub's bound for a huge plan with huge texts", () => {
    const huge = [
      ...planned.slice(0, 9),
      ...Array.from(
        { length: 400 },
        (_, index) =>
          ({
            ...task(`t${index}`, 1 + (index % 5), "x".repeat(5000)),
            files: Array.from({ length: 50 }, (_, file) => `src/${"d".repeat(300)}/${file}.ts`),
          }) as HistoryEvent,
      ),
    ];
    const output = renderPlannerCheck(replay(huge), "planner");
    expect(Buffer.byteLength(output.summary, "utf8")).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
    expect(output.title).toBe("Planned 400 tasks in 5 waves (attempt 2/2)");
    expect(output.summary).toContain("and 40 more");
  });
});

describe("the planner's check run on GitHub (fake)", () => {
  const gh = useFakeGitHub();
  let octokit: ReturnType<typeof fakeOctokit>;
  beforeAll(async () => {
    await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
    octokit = fakeOctokit(gh, { installation: true });
  });

  it("is created queued on the pull request's head, moves to in progress, and completes with the plan", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Three parts", user: "writer", labels: ["story"] });
    const pull = await openStoryPull(gh, octokit, issue.number);
    const reporter = new GitHubReporter({
      octokit,
      owner: OWNER,
      repo: NAME,
      pullNumber: pull.number,
      issueNumber: issue.number,
      headSha: pull.headSha,
      log: new RecordingLog(),
      botLogin: gh.botLogin,
    });
    let snapshot = emptySnapshot();
    for (const event of planned) {
      snapshot = reduceSnapshot(snapshot, event);
      await reporter.onEvent(event, snapshot);
    }
    const runs = gh.state.checkRuns.filter(
      (run) => run.name === "harness / planner" && run.headSha === pull.headSha && run.externalId === `story-${issue.number}`,
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", conclusion: "success", output: { title: "Planned 3 tasks in 2 waves (attempt 2/2)" } });
    expect(runs[0]?.history.map((body) => body.status).filter((status, index, all) => status !== all[index - 1])).toEqual([
      "queued",
      "in_progress",
      "completed",
    ]);
    expect(runs[0]?.output.summary).toContain("### The plan");
    expect(runs[0]?.actions).toEqual([]);
  });
});
