/**
 * The coordinator's decisions (src/pipeline/coordinator.ts), each on the smallest real story:
 * a one-commit repository, workflows of one gate or one seat, agents and suites that are one
 * shell line. Which route a story takes (a plan, a planner, one task), what ends it before a
 * worktree (preflight, a refused plan), what a failure becomes (provisioning, the baseline, a
 * stop request, the harness's own error), what is committed, and what is logged when a commit
 * or a removal fails.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type RunStoryArgs, type StoryOutcome, type Workflow } from "../../src/pipeline/index.js";
import { createTaskWorktree, git, removeTaskWorktree, taskWorktreePath } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { kinds, makeScenario, ofKind, type Scenario } from "./helpers.js";
import { sandboxOf } from "./task-run.js";
import { minimalConfig, runMinimal, workflow } from "./minimal-story.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

afterAll(removeTempDirs);

const IMPLEMENTER = { id: "implementer", seat: "implementer", prompt: "prompts/implementer.md" };
const GATE = { id: "check", kind: "gate" };

const gateOnly = (s: Scenario): Workflow => workflow(s, "gate-only", [GATE], "check");
const seatOnly = (s: Scenario): Workflow => workflow(s, "seat-only", [IMPLEMENTER], "implementer");

const config = minimalConfig;
const run = runMinimal;

const filesOf = async (s: Scenario, commit: string): Promise<string[]> =>
  (await git(["show", "--name-only", "--format=", commit], { cwd: s.repo })).split("\n").filter((line) => line !== "");
const coordinatorLog = (outcome: StoryOutcome): string => {
  const path = join(outcome.runDir, "logs", "coordinator.log");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};

describe("runStory's decisions", () => {
  it("blocks as config-invalid at preflight, before any worktree, naming the configuration by default", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await run(s, { config: config({ extra: "seats:\n  verifer:\n    timeout_minutes: 5" }), workflow: gateOnly(s) });
    const taskId = ofKind(journal, "run.started")[0]?.taskId ?? "";
    expect(taskId).toMatch(/^task-\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(outcome).toEqual({
      status: "blocked",
      failureClass: "config-invalid",
      detail: expect.stringContaining("configuration: $.seats.verifer names no seat"),
      branch: "harness/story-demo",
      runDir: join(s.home, "runs", "demo", taskId.slice("task-".length)),
      worktree: taskWorktreePath(s.home, "demo", taskId),
    });
    expect(journal.map((event) => [event.kind, "taskId" in event ? event.taskId : undefined])).toEqual([
      ["run.started", taskId],
      ["story.blocked", taskId],
    ]);
    expect(ofKind(journal, "story.blocked")[0]).toMatchObject({ failureClass: "config-invalid", detail: outcome.detail });
    expect(await git(["branch", "--list", "harness/*"], { cwd: s.repo })).toBe("");
  });

  it("refuses a story's plan that is not JSON before any worktree, as config-invalid of no task", async () => {
    const s = await makeScenario();
    const body = "Two parts.\n\n```harness-plan\n{ not json\n```\n";
    const { outcome, journal } = await run(s, { config: config({}), workflow: gateOnly(s), story: { id: "demo", title: "Plan", body } });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "config-invalid", detail: expect.stringMatching(/^the story's harness-plan block: /) });
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    for (const event of journal) expect(event).not.toHaveProperty("taskId");
    expect(await git(["branch", "--list", "harness/*"], { cwd: s.repo })).toBe("");
  });

  it("completes a gate-only story with the clock, collaborators and sandbox it is given, commits what the task made and removes the worktree", async () => {
    const s = await makeScenario();
    const head = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const at = new Date("2026-12-01T10:20:30.000Z");
    const created: unknown[] = [];
    const removed: string[][] = [];
    // The real collaborators, recorded; the removal then reports a failure, which is only logged.
    const deps: RunStoryArgs["deps"] = {
      createTaskWorktree: async (args) => {
        created.push(args);
        return createTaskWorktree(args);
      },
      removeTaskWorktree: async (repoDir, path) => {
        removed.push([repoDir, path]);
        await removeTaskWorktree(repoDir, path);
        throw new Error("removal refused");
      },
    };
    // The operator's sandbox as the App's edge resolves it from the environment (on by default).
    const { outcome, journal } = await run(s, {
      config: config({ test: "echo made > made.txt" }),
      workflow: gateOnly(s),
      clock: () => at,
      deps,
      readmission: true,
      sandbox: sandboxFromEnv(),
    });

    const started = ofKind(journal, "run.started")[0];
    const taskId = started?.taskId ?? "";
    expect(basename(outcome.runDir)).toMatch(/^20261201T102030Z-[0-9a-f]{6}$/);
    expect(taskId).toBe(`task-${basename(outcome.runDir)}`);
    expect(started).toMatchObject({ maxAttempts: 2, readmission: true, at: at.toISOString() });
    expect(started).not.toHaveProperty("unsandboxed");
    // The task's worktree, then the baseline's own checkout of the base, removed once its suite ran.
    expect(created).toEqual([
      { repoDir: s.repo, harnessHome: s.home, storyId: "demo", taskId, branch: "harness/story-demo", baseRef: "HEAD" },
      { repoDir: s.repo, harnessHome: s.home, storyId: "demo", taskId: `${taskId}-baseline`, branch: "harness/story-demo", baseRef: head, detach: true },
    ]);
    expect(removed).toEqual([
      [s.repo, taskWorktreePath(s.home, "demo", `${taskId}-baseline`)],
      [s.repo, outcome.worktree],
    ]);
    expect(outcome).toEqual({
      status: "completed",
      branch: "harness/story-demo",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      runDir: outcome.runDir,
      worktree: taskWorktreePath(s.home, "demo", taskId),
    });
    // The baseline runs beside provisioning: it starts with the worktree and ends before the first stage that needs it.
    expect(kinds(journal).indexOf("baseline.finished")).toBeLessThan(kinds(journal).indexOf("stage.started"));
    expect(kinds(journal).filter((kind) => kind !== "baseline.finished")).toEqual([
      "run.started",
      "task.planned",
      "task.started",
      "worktree.created",
      "baseline.started",
      "provision.succeeded",
      "stage.started",
      "gate.finished",
      "stage.finished",
      "task.finished",
      "story.completed",
    ]);
    // The story's one task, as a planned story's tasks are journaled: planned, started and finished with its commit.
    expect(ofKind(journal, "task.planned")).toEqual([
      { kind: "task.planned", taskId, title: "Greet the user", wave: 1, files: [], blockedBy: [], stages: ["check"], at: at.toISOString() },
    ]);
    expect(ofKind(journal, "task.started")).toEqual([{ kind: "task.started", taskId, wave: 1, attempt: 1, at: at.toISOString() }]);
    expect(ofKind(journal, "task.finished")).toEqual([
      { kind: "task.finished", taskId, outcome: "completed", attempt: 1, durationMs: expect.any(Number), commit: outcome.commit, at: at.toISOString() },
    ]);
    expect(ofKind(journal, "worktree.created")[0]).toMatchObject({ taskId, worktree: outcome.worktree, branch: "harness/story-demo", base: head });
    expect(ofKind(journal, "provision.succeeded")[0]).toMatchObject({ taskId, phase: "worktree" });
    expect(ofKind(journal, "story.completed")[0]).toEqual({
      kind: "story.completed",
      taskId,
      branch: "harness/story-demo",
      commit: outcome.commit,
      at: at.toISOString(),
    });
    expect(await git(["rev-parse", "harness/story-demo"], { cwd: s.repo })).toBe(outcome.commit);
    expect(await filesOf(s, outcome.commit ?? "")).toEqual(["made.txt"]);
    expect(await git(["log", "-1", "--format=%s", outcome.commit ?? ""], { cwd: s.repo })).toBe("Story demo: Greet the user");
    expect(existsSync(outcome.worktree)).toBe(false);
    expect(coordinatorLog(outcome)).toContain("worktree removal failed: Error: removal refused");
  });

  it("blocks a story whose gate fails at the configuration's ceiling, with an empty commit when no agent ran", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await run(s, {
      config: config({ test: "echo made > made.txt; exit 1", extra: "max_attempts: 1" }),
      workflow: gateOnly(s),
      sandbox: sandboxOf(false),
    });
    const started = ofKind(journal, "run.started")[0];
    const taskId = started?.taskId ?? "";
    expect(started).toMatchObject({ maxAttempts: 1, readmission: false, unsandboxed: true });
    expect(outcome).toEqual({
      status: "blocked",
      failureClass: "retry-ceiling",
      detail: expect.stringContaining("attempt 1 of 1 failed at check (suite-failed)"),
      branch: "harness/story-demo",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      runDir: outcome.runDir,
      worktree: taskWorktreePath(s.home, "demo", taskId),
    });
    expect(ofKind(journal, "story.blocked")).toEqual([
      {
        kind: "story.blocked",
        taskId,
        failureClass: "retry-ceiling",
        detail: outcome.detail,
        branch: "harness/story-demo",
        commit: outcome.commit,
        at: expect.any(String),
      },
    ]);
    expect(await git(["rev-parse", "harness/story-demo"], { cwd: s.repo })).toBe(outcome.commit);
    expect(await filesOf(s, outcome.commit ?? "")).toEqual([]);
    expect(await git(["log", "-1", "--format=%B", outcome.commit ?? ""], { cwd: s.repo })).toMatch(/Failure-Class: retry-ceiling\n?$/);
    expect(existsSync(outcome.worktree)).toBe(false);
  });

  it("commits an agent's work when the story blocks after it, hands the agent the allowed environment, and runs no baseline without a suite stage", async () => {
    const s = await makeScenario();
    process.env.COORDINATOR_TEST_KEY = "allowed-value";
    try {
      const cfg = config({ agent: "printenv COORDINATOR_TEST_KEY > feature.txt; exit 1", extra: "max_attempts: 1" });
      cfg.agent.env = ["COORDINATOR_TEST_KEY"];
      const { outcome, journal } = await run(s, { config: cfg, workflow: seatOnly(s), agentEnvAllow: ["COORDINATOR_TEST_KEY"] });
      expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
      expect(ofKind(journal, "baseline.finished")).toEqual([]);
      expect(await filesOf(s, outcome.commit ?? "")).toEqual(["feature.txt"]);
      expect(await git(["show", `${outcome.commit ?? ""}:feature.txt`], { cwd: s.repo })).toBe("allowed-value");
    } finally {
      delete process.env.COORDINATOR_TEST_KEY;
    }
  });

  it("blocks as environment, before any stage, when the suite cannot start on the base, committing nothing provisioning left", async () => {
    const s = await makeScenario();
    const removals: string[] = [];
    const deps: RunStoryArgs["deps"] = {
      removeTaskWorktree: async (repoDir, path) => {
        removals.push(path);
        await removeTaskWorktree(repoDir, path);
        throw new Error("removal refused");
      },
    };
    const { outcome, journal } = await run(s, {
      config: config({ provision: "echo p > provisioned.txt", test: "no-such-suite-here" }),
      workflow: gateOnly(s),
      deps,
    });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "environment", detail: expect.stringContaining("`no-such-suite-here` cannot start") });
    expect(kinds(journal)).not.toContain("stage.started");
    expect(await filesOf(s, outcome.commit ?? "")).toEqual([]);
    expect(removals).toEqual([taskWorktreePath(s.home, "demo", `${ofKind(journal, "run.started")[0]?.taskId ?? ""}-baseline`), outcome.worktree]);
    expect(coordinatorLog(outcome)).toContain("worktree removal failed: Error: removal refused");
    expect(coordinatorLog(outcome)).toContain("baseline checkout removal failed: Error: removal refused");
  });

  it("logs a commit of blocked work that failed, and blocks without a commit", async () => {
    const s = await makeScenario();
    // Unsandboxed, provisioning can lock the worktree's index: the commit then fails.
    const lock = 'touch "$(git rev-parse --git-path index.lock)"';
    const { outcome, journal } = await run(s, {
      config: config({ provision: lock, test: "no-such-suite-here" }),
      workflow: gateOnly(s),
      sandbox: sandboxOf(false),
    });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "environment" });
    expect(outcome).not.toHaveProperty("commit");
    expect(coordinatorLog(outcome)).toContain("commit of blocked work failed");
    const blocked = ofKind(journal, "story.blocked")[0];
    expect(blocked).not.toHaveProperty("commit");
    expect(blocked).not.toHaveProperty("branch");
  });

  it("blocks on a provisioning command that fails, naming it, its exit and its log relative to the run directory", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await run(s, { config: config({ provision: "echo broken; exit 5" }), workflow: gateOnly(s) });
    const taskId = ofKind(journal, "run.started")[0]?.taskId ?? "";
    expect(outcome).toMatchObject({
      status: "blocked",
      failureClass: "workspace-provision-failed",
      detail: `provisioning \`echo broken; exit 5\` exited 5; log: logs/provision-${taskId}.log in the run directory`,
    });
    expect(ofKind(journal, "provision.failed")).toEqual([
      { kind: "provision.failed", taskId, cmd: "echo broken; exit 5", exitCode: 5, logTail: expect.stringContaining("broken"), at: expect.any(String) },
    ]);
    expect(await filesOf(s, outcome.commit ?? "")).toEqual([]);
  });

  it("says of a provisioning that ran out of time that it did not finish", async () => {
    const s = await makeScenario();
    const cfg = config({ provision: "sleep 600" });
    cfg.provision.timeoutMs = 500;
    const { outcome } = await run(s, { config: cfg, workflow: gateOnly(s) });
    expect(outcome).toMatchObject({
      failureClass: "workspace-provision-failed",
      detail: expect.stringMatching(/^provisioning `sleep 600` did not finish; log: logs\//),
    });
  });

  it("ends a stopped story as interrupted, even when its provisioning then failed", async () => {
    const s = await makeScenario();
    const controller = new AbortController();
    controller.abort();
    const { outcome, journal } = await run(s, { config: config({ provision: "exit 5" }), workflow: gateOnly(s), signal: controller.signal });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "interrupted", detail: "the run was stopped" });
    expect(ofKind(journal, "provision.failed")).toEqual([]);
  });

  it("blocks as the harness's own error when the task's worktree cannot be made, with nothing to commit", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await run(s, { config: config({}), workflow: gateOnly(s), branch: "harness/bad..name" });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "internal-error", detail: "'harness/bad..name' is not a valid branch name" });
    expect(outcome).not.toHaveProperty("commit");
    expect(ofKind(journal, "story.blocked")[0]).not.toHaveProperty("commit");
    // No task, so neither a commit nor a removal was tried (either would have logged its failure).
    expect(coordinatorLog(outcome)).toBe("");
  });

  it("runs a story that brings a plan as a plan, not as one task", async () => {
    const s = await makeScenario();
    const plan = { tasks: [{ id: "a", title: "Part a", files: ["a.txt"] }] };
    const body = `One part.\n\n\`\`\`harness-plan\n${JSON.stringify(plan)}\n\`\`\`\n`;
    const { outcome, journal } = await run(s, {
      config: config({ agent: "exit 1", extra: "max_attempts: 1" }),
      workflow: seatOnly(s),
      story: { id: "demo", title: "Plan", body },
    });
    expect(ofKind(journal, "run.started")[0]).not.toHaveProperty("taskId");
    expect(ofKind(journal, "worktree.created").map((event) => event.taskId)).toEqual(["a"]);
    expect(outcome).toMatchObject({ status: "blocked", blockedTasks: ["a"] });
  });

  it("runs a workflow that starts with a planner as a plan, though the story brings none", async () => {
    const s = await makeScenario();
    const planning = workflow(s, "planning", [{ id: "planner", kind: "planner", seat: "planner", prompt: "prompts/planner.md" }, IMPLEMENTER], "implementer");
    const { outcome, journal } = await run(s, { config: config({ extra: "max_attempts: 1" }), workflow: planning });
    expect(ofKind(journal, "run.started")[0]).not.toHaveProperty("taskId");
    expect(ofKind(journal, "worktree.created").map((event) => event.taskId)).toEqual(["planner"]);
    expect(outcome.status).toBe("blocked");
  });
});
