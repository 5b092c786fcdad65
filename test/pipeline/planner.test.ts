import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadWorkflow, parseHarnessConfig, type HarnessConfig, type HistoryEvent } from "../../src/pipeline/index.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, q, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

const PLAN_AGENT = fileURLToPath(new URL("../fixtures/agents/plan-agent.sh", import.meta.url));
const PLANNER_WORKFLOW = fileURLToPath(new URL("../fixtures/workflows/planner-workflow.json", import.meta.url));

function planConfig(s: Scenario, scenario: string): HarnessConfig {
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
    "",
  ];
  return parseHarnessConfig(yaml.join("\n"), "harness.yml");
}
const launched = (s: Scenario): string[] =>
  existsSync(s.launches)
    ? readFileSync(s.launches, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
const at = (journal: HistoryEvent[], kind: string, taskId: string): number =>
  journal.findIndex((event) => event.kind === kind && "taskId" in event && event.taskId === taskId);
const story = (body: string) => ({
  story: { id: "planned", title: "Three parts", body },
  branch: "harness/story-planned",
  workflow: loadWorkflow(PLANNER_WORKFLOW),
});

describe("a workflow that starts with a planner stage", () => {
  it("runs the planner seat in its own provisioned worktree, then the plan it wrote (plan.json) as the story's tasks in waves", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, planConfig(s, "planner"), story("Build three parts; plan them yourself."));

    expect(outcome).toMatchObject({ status: "completed", branch: "harness/story-planned" });
    expect(ofKind(journal, "run.started")[0]?.taskId).toBeUndefined();
    expect(ofKind(journal, "task.planned").map((event) => [event.taskId, event.wave])).toEqual([
      ["planner", 0],
      ["a", 1],
      ["b", 1],
      ["c", 2],
      ["integration", 0],
    ]);
    // The planner ran before any task was planned, in a worktree of its own, provisioned first.
    expect(at(journal, "provision.succeeded", "planner")).toBeGreaterThan(at(journal, "worktree.created", "planner"));
    expect(at(journal, "provision.succeeded", "planner")).toBeLessThan(at(journal, "stage.started", "planner"));
    expect(at(journal, "task.finished", "planner")).toBeLessThan(at(journal, "task.planned", "a"));
    expect(ofKind(journal, "task.finished").find((event) => event.taskId === "planner")).toMatchObject({ outcome: "completed", attempt: 1 });
    expect(ofKind(journal, "wave.started").map((event) => event.tasks)).toEqual([["a", "b"], ["c"]]);
    // The planner's seat saw its own stage and task; the tasks ran the per-task stages, not the planner.
    expect(launched(s).filter((line) => line.startsWith("planner "))).toEqual(["planner planner 1"]);
    expect(
      launched(s)
        .filter((line) => line.endsWith("implementer 1"))
        .sort(),
    ).toEqual(["a implementer 1", "b implementer 1", "c implementer 1"]);
    const plan = JSON.parse(readFileSync(join(outcome.runDir, "tasks", "planner", "attempts", "1", "planner", "artifacts", "plan.json"), "utf8")) as {
      tasks: { id: string }[];
    };
    expect(plan.tasks.map((task) => task.id)).toEqual(["a", "b", "c"]);
    const files = (await git(["ls-tree", "-r", "--name-only", "harness/story-planned"], { cwd: s.repo })).split("\n");
    expect(files).toEqual(expect.arrayContaining(["src/a.txt", "src/b.txt", "src/c.txt"]));
  });

  it("fails the planner's attempt on a plan the harness refuses (a cycle), naming it, and plans again with the problem in the prompt", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, planConfig(s, "planner-retry"), story("Build three parts; plan them yourself."));
    expect(outcome.status).toBe("completed");
    const retry = ofKind(journal, "retry.scheduled");
    expect(retry).toEqual([expect.objectContaining({ taskId: "planner", failureClass: "artifact-invalid", retryStage: "planner" })]);
    expect(retry[0]?.reason).toContain("cycle of blocked_by: a → b → a");
    expect(launched(s).filter((line) => line.startsWith("planner "))).toEqual(["planner planner 1", "planner planner 2"]);
  });

  it("blocks the story, naming the planner, when no plan it writes is accepted", async () => {
    const s = await makeScenario();
    const config = parseHarnessConfig(
      ["agent:", '  command: "true"', "test:", '  command: "true"', "provision:", '  command: "true"', "max_attempts: 1", ""].join("\n"),
      "harness.yml",
    );
    const { outcome, journal } = await runScenario(s, config, story("Plan this."));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling", blockedTasks: ["planner"] });
    expect(outcome.detail).toContain("artifact-missing");
    expect(ofKind(journal, "task.planned").map((event) => event.taskId)).toEqual(["planner"]);
    expect(ofKind(journal, "story.blocked")).toHaveLength(1);
  });

  it("skips the planner when the story brings its own harness-plan block", async () => {
    const s = await makeScenario();
    const plan = { tasks: [{ id: "a", title: "Part a", files: ["src/a.txt"] }] };
    const { outcome, journal } = await runScenario(s, planConfig(s, "planner"), story(`One part.\n\n\`\`\`harness-plan\n${JSON.stringify(plan)}\n\`\`\`\n`));
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "task.planned").map((event) => event.taskId)).toEqual(["a", "integration"]);
    expect(launched(s).some((line) => line.startsWith("planner "))).toBe(false);
  });
});
