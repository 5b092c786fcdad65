import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseHarnessConfig, type HarnessConfig, type HistoryEvent } from "../../src/pipeline/index.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { kinds, makeScenario, ofKind, q, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

const PLAN_AGENT = fileURLToPath(new URL("../fixtures/agents/plan-agent.sh", import.meta.url));

function planConfig(s: Scenario, scenario: string, extra = ""): HarnessConfig {
  const yaml = [
    "agent:",
    `  command: ${JSON.stringify(`sh ${q(PLAN_AGENT)} ${scenario} ${q(s.launches)}`)}`,
    "test:",
    '  command: "true"',
    "provision:",
    '  command: "true"',
    "max_attempts: 2",
    "plan:",
    "  concurrency: 2",
    extra,
  ].join("\n");
  return parseHarnessConfig(yaml, "harness.yml");
}

type Task = { id: string; files: string[]; blocked_by?: string[] };
const planBody = (tasks: Task[]): string =>
  `Build the three parts.\n\n\`\`\`harness-plan\n${JSON.stringify({ tasks: tasks.map((task) => ({ title: `Part ${task.id}`, ...task })) })}\n\`\`\`\n`;
const THREE: Task[] = [
  { id: "a", files: ["src/a.txt"] },
  { id: "b", files: ["src/b.txt"] },
  { id: "c", files: ["src/c.txt"], blocked_by: ["a", "b"] },
];
const story = (tasks: Task[]) => ({ story: { id: "plan", title: "Three parts", body: planBody(tasks) }, branch: "harness/story-plan" });

/** Index in the journal of the first event matching. */
const indexOf = (journal: HistoryEvent[], kind: string, taskId: string): number =>
  journal.findIndex((event) => event.kind === kind && "taskId" in event && event.taskId === taskId);
const taskLaunches = (s: Scenario): string[] =>
  existsSync(s.launches)
    ? readFileSync(s.launches, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];

describe("a story with a plan", () => {
  it("blocks a task whose test command cannot start on its base as environment, before a second agent", async () => {
    const s = await makeScenario();
    const config = planConfig(s, "plan");
    const { outcome, journal } = await runScenario(s, { ...config, test: { ...config.test, command: "no-such-suite-runner --all" } }, story(THREE));

    expect(outcome).toMatchObject({ status: "blocked" });
    const finished = ofKind(journal, "task.finished").filter((event) => event.taskId === "a" || event.taskId === "b");
    expect(finished.map((event) => [event.taskId, event.outcome, event.failureClass])).toEqual(
      expect.arrayContaining([
        ["a", "blocked", "environment"],
        ["b", "blocked", "environment"],
      ]),
    );
    expect(finished[0]?.detail).toContain("`no-such-suite-runner --all` cannot start");
    expect(ofKind(journal, "baseline.finished").map((event) => event.exitCode)).toEqual([127, 127]);
    // Each task's baseline ran beside its implementer; nothing after it ran.
    expect(taskLaunches(s).sort()).toEqual(["a implementer 1", "b implementer 1"]);
  });

  it("blocks a task whose base is red the same way as its change as baseline-red, without retrying its agents", async () => {
    const s = await makeScenario();
    const config = planConfig(s, "plan");
    const { outcome, journal } = await runScenario(s, { ...config, test: { ...config.test, command: "echo 'FAIL base is broken'; exit 1" } }, story(THREE));

    expect(outcome).toMatchObject({ status: "blocked" });
    const finished = ofKind(journal, "task.finished").filter((event) => event.taskId === "a" || event.taskId === "b");
    // Whole events, so a failure prints each task's detail (what it blocked on instead).
    const asBaselineRed = expect.objectContaining({ failureClass: "baseline-red", attempt: 1 });
    expect(finished).toEqual([asBaselineRed, asBaselineRed]);
    expect(taskLaunches(s).filter((line) => line.endsWith("implementer 2"))).toEqual([]);
  });

  it("runs two independent tasks side by side, the third after both, each in its own provisioned worktree, all work on the story branch", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, planConfig(s, "plan"), story(THREE));

    expect(outcome).toMatchObject({ status: "completed", branch: "harness/story-plan" });
    expect(ofKind(journal, "run.started")[0]?.taskId).toBeUndefined();
    expect(ofKind(journal, "task.planned").map((event) => [event.taskId, event.wave])).toEqual([
      ["a", 1],
      ["b", 1],
      ["c", 2],
      ["integration", 0],
    ]);
    expect(ofKind(journal, "wave.started").map((event) => event.tasks)).toEqual([["a", "b"], ["c"]]);
    // Overlap, from the record: both tasks of wave 1 started before either finished.
    const firstFinish = Math.min(indexOf(journal, "task.finished", "a"), indexOf(journal, "task.finished", "b"));
    expect(indexOf(journal, "task.started", "a")).toBeLessThan(firstFinish);
    expect(indexOf(journal, "task.started", "b")).toBeLessThan(firstFinish);
    // The third started only after both were merged.
    const merged = journal.findIndex((event) => event.kind === "wave.merged" && event.wave === 1);
    expect(merged).toBeGreaterThan(Math.max(indexOf(journal, "task.finished", "a"), indexOf(journal, "task.finished", "b")));
    expect(indexOf(journal, "task.started", "c")).toBeGreaterThan(merged);
    // Each task in its own worktree, provisioned before its first stage.
    const worktrees = ofKind(journal, "worktree.created");
    expect(new Set(worktrees.map((event) => event.worktree)).size).toBe(4);
    for (const id of ["a", "b", "c"]) {
      expect(indexOf(journal, "provision.succeeded", id)).toBeGreaterThan(indexOf(journal, "worktree.created", id));
      expect(indexOf(journal, "provision.succeeded", id)).toBeLessThan(indexOf(journal, "stage.started", id));
      // The baseline: the suite once on the task's base, started with its worktree (beside provisioning and
      // the first agent), finished before its second stage.
      expect(indexOf(journal, "baseline.started", id)).toBeGreaterThan(indexOf(journal, "worktree.created", id));
      expect(indexOf(journal, "baseline.started", id)).toBeLessThan(indexOf(journal, "stage.started", id));
      const secondStage = journal.findIndex((event, at) => event.kind === "stage.started" && event.taskId === id && at > indexOf(journal, "stage.started", id));
      expect(indexOf(journal, "baseline.finished", id)).toBeLessThan(secondStage);
    }
    expect(ofKind(journal, "baseline.finished").filter((event) => event.taskId === "c")[0]?.commit).toBe(ofKind(journal, "wave.merged")[0]?.commit);
    // Agents knew their task.
    expect(
      taskLaunches(s)
        .filter((line) => line.endsWith("implementer 1"))
        .sort(),
    ).toEqual(["a implementer 1", "b implementer 1", "c implementer 1"]);
    // Story level, on the merged branch: the clean-clone check, then the documenter; once.
    const integration = journal
      .filter((event) => "taskId" in event && event.taskId === "integration" && event.kind === "stage.started")
      .map((event) => (event as { stage: string }).stage);
    // The integrity gate last: it judges what the documenter changed.
    expect(integration).toEqual(["clean-clone", "documenter", "integrity"]);
    expect(ofKind(journal, "clean_clone.finished").filter((event) => event.taskId === "integration")[0]?.result).toMatchObject({ ran: true, exitCode: 0 });
    expect(taskLaunches(s).filter((line) => line.includes("documenter"))).toEqual(["integration documenter 1"]);

    const tip = await git(["rev-parse", "harness/story-plan"], { cwd: s.repo });
    expect(tip).toBe(outcome.commit);
    const files = (await git(["ls-tree", "-r", "--name-only", tip], { cwd: s.repo })).split("\n");
    expect(files).toEqual(expect.arrayContaining(["src/a.txt", "src/b.txt", "src/c.txt", "README.md"]));
    expect(await git(["show", `${tip}:README.md`], { cwd: s.repo })).toContain("documented");
    const trailers = await git(["log", "--first-parent", "--format=%(trailers:key=Harness-Task,valueonly)", tip], { cwd: s.repo });
    expect(trailers.split("\n").filter((line) => line !== "")).toEqual(["c", "b", "a"]);
    expect(readdirSync(join(s.home, "worktrees", "plan"))).toEqual([]);
  });

  it("blocks only the dependents of a failing task, keeps the independent one's work, and retry-blocked re-admits only the blocked tasks", async () => {
    const s = await makeScenario();
    const first = await runScenario(s, planConfig(s, "fail-a"), story(THREE));
    // The independent task is not among the blocked (a failure prints why each task blocked).
    expect(first.outcome.detail).not.toMatch(/^- b:/m);
    expect(first.outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling", blockedTasks: ["a", "c"] });
    const finished = ofKind(first.journal, "task.finished");
    expect(finished.map((event) => [event.taskId, event.outcome, event.failureClass])).toEqual(
      expect.arrayContaining([
        ["a", "blocked", "retry-ceiling"],
        ["b", "completed", undefined],
        ["c", "blocked", "blocked-by-dependency"],
      ]),
    );
    expect(finished.find((event) => event.taskId === "c")?.detail).toContain("'a'");
    expect(ofKind(first.journal, "task.started").map((event) => event.taskId)).not.toContain("c");
    const blockedTip = await git(["rev-parse", "harness/story-plan"], { cwd: s.repo });
    expect(await git(["show", `${blockedTip}:src/b.txt`], { cwd: s.repo })).toBe("b");
    expect(await git(["log", "-1", "--format=%B", blockedTip], { cwd: s.repo })).toContain("Failure-Class: retry-ceiling");

    writeFileSync(`${s.launches}.fixed`, "");
    writeFileSync(s.launches, "");
    const second = await runScenario(s, planConfig(s, "fail-a"), { ...story(THREE), readmission: true });
    expect(second.outcome.status).toBe("completed");
    expect(
      ofKind(second.journal, "task.started")
        .map((event) => event.taskId)
        .sort(),
    ).toEqual(["a", "c", "integration"]);
    expect(ofKind(second.journal, "task.finished").find((event) => event.taskId === "b")).toMatchObject({ outcome: "completed", kept: true });
    expect(taskLaunches(s).some((line) => line.startsWith("b "))).toBe(false);
    const files = (await git(["ls-tree", "-r", "--name-only", "harness/story-plan"], { cwd: s.repo })).split("\n");
    expect(files).toEqual(expect.arrayContaining(["src/a.txt", "src/b.txt", "src/c.txt"]));
  });

  it.each([
    [
      "a cycle",
      [
        { id: "a", files: ["a"], blocked_by: ["b"] },
        { id: "b", files: ["b"], blocked_by: ["a"] },
      ],
      "cycle of blocked_by: a → b → a",
    ],
    [
      "overlapping files in one wave",
      [
        { id: "a", files: ["src/**"] },
        { id: "b", files: ["src/b.txt"] },
      ],
      "tasks 'a' and 'b' run in wave 1 and their files overlap",
    ],
    ["an unknown id", [{ id: "a", files: ["a"], blocked_by: ["zz"] }], "task 'a' is blocked by 'zz'"],
  ])("refuses %s before any worktree, naming the tasks", async (_name, tasks, words) => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, planConfig(s, "plan"), story(tasks as Task[]));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "config-invalid" });
    expect(outcome.detail).toContain(words);
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    expect(taskLaunches(s)).toEqual([]);
    expect(existsSync(join(s.home, "worktrees"))).toBe(false);
    expect(await git(["branch", "--list", "harness/*"], { cwd: s.repo })).toBe("");
  });

  it("fails the attempt of a task that changes files outside its declared files (scope-violation)", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, planConfig(s, "scope"), story([{ id: "a", files: ["src/a.txt"] }]));
    expect(outcome.status).toBe("completed");
    const retry = ofKind(journal, "retry.scheduled");
    expect(retry).toEqual([expect.objectContaining({ taskId: "a", failureClass: "scope-violation" })]);
    expect(retry[0]?.reason).toContain("stray.txt");
    const files = (await git(["ls-tree", "-r", "--name-only", "harness/story-plan"], { cwd: s.repo })).split("\n");
    expect(files).not.toContain("stray.txt");
  });

  it("fails the later task's attempt on a merge conflict and runs it again on the merged state", async () => {
    const s = await makeScenario();
    const tasks: Task[] = [
      { id: "a", files: ["src/*"] },
      { id: "b", files: ["src/x/*"] },
    ];
    const { outcome, journal } = await runScenario(s, planConfig(s, "conflict"), story(tasks));
    expect(outcome.status).toBe("completed");
    const retry = ofKind(journal, "retry.scheduled");
    expect(retry).toEqual([expect.objectContaining({ taskId: "b", failureClass: "base-conflict", nextAttempt: 2 })]);
    expect(retry[0]?.reason).toContain("src/x");
    // Attempt 2 started from the story branch with a's work merged.
    const bWorktrees = ofKind(journal, "worktree.created").filter((event) => event.taskId === "b");
    const merged = ofKind(journal, "wave.merged");
    expect(bWorktrees).toHaveLength(2);
    expect(bWorktrees[1]?.base).not.toBe(bWorktrees[0]?.base);
    expect(merged.at(-1)?.merged).toEqual(["a", "b"]);
    expect(await git(["show", "harness/story-plan:src/x"], { cwd: s.repo })).toBe("a");
  });
});
