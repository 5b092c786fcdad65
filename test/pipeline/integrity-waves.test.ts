/**
 * The test-integrity gate on a planned story: every task's work merged onto the story branch is
 * judged against the story's base before the branch moves (so a weakened suite is caught after
 * its wave, before the next wave builds on it), and the story-level documenter's change is
 * judged after it, in its own ladder.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadWorkflow, parseHarnessConfig, type HarnessConfig, type HistoryEvent } from "../../src/pipeline/index.js";
import { git } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, q, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

const PLAN_AGENT = fileURLToPath(new URL("../fixtures/agents/plan-agent.sh", import.meta.url));
const MATH = 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("adds", () => {\n  assert.equal(1 + 2, 3);\n});\n';

function planConfig(s: Scenario, scenario: string, maxAttempts: number): HarnessConfig {
  const yaml = [
    "agent:",
    `  command: ${JSON.stringify(`sh ${q(PLAN_AGENT)} ${scenario} ${q(s.launches)}`)}`,
    "test:",
    '  command: "true"',
    "provision:",
    '  command: "true"',
    `max_attempts: ${maxAttempts}`,
  ].join("\n");
  return parseHarnessConfig(yaml, "harness.yml");
}

/** Task a may touch the tests; c waits for a and b (the second wave). */
const THREE = [
  { id: "a", title: "Part a", files: ["src/a.txt", "test/**"] },
  { id: "b", title: "Part b", files: ["src/b.txt"] },
  { id: "c", title: "Part c", files: ["src/c.txt"], blocked_by: ["a", "b"] },
];
const story = (integrityBase: string) => ({
  story: { id: "plan", title: "Three parts", body: `Build three parts.\n\n\`\`\`harness-plan\n${JSON.stringify({ tasks: THREE })}\n\`\`\`\n` },
  branch: "harness/story-plan",
  // A commit, as the runner and the CLI give it.
  integrityBase,
});

const launched = (s: Scenario): string[] => (existsSync(s.launches) ? readFileSync(s.launches, "utf8").split("\n").filter(Boolean) : []);
const firstOf = (journal: HistoryEvent[], match: (event: HistoryEvent) => boolean): number => journal.findIndex(match);

/**
 * The default stages with the integrity gate at story scope: no task judges its own worktree, so
 * what is caught after wave 1 is the merge gate's doing alone.
 */
function storyScopedGate(): ReturnType<typeof loadWorkflow> {
  const file = join(makeTempDir("harness-waves-workflow-"), "workflow.json");
  const seat = (id: string) => ({ id, seat: id, prompt: `prompts/${id}.md` });
  writeFileSync(
    file,
    JSON.stringify({
      name: "story-scoped gate",
      max_attempts: 2,
      stages: [
        seat("implementer"),
        { ...seat("verifier"), gate: "suite", artifacts: [{ name: "verdict.json", schema: "verdict" }], verdict: "verdict.json" },
        { id: "integrity", kind: "integrity", scope: "story" },
      ],
      on_failure: { retry_stage: "implementer" },
    }),
  );
  return loadWorkflow(file);
}

describe("the integrity gate after each wave's merge", () => {
  it("raises nothing on a clean plan: each merge is judged against the story's base, and the whole story after the documenter", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH });
    const main = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const { outcome, journal } = await runScenario(s, planConfig(s, "plan", 1), story(main));
    expect(outcome).toMatchObject({ status: "completed" });
    const gates = ofKind(journal, "integrity.finished");
    // Each task's worktree, then its merge (with the merge commit), then the merged story after the documenter.
    const merges = gates.filter((gate) => gate.merged !== undefined);
    expect(merges.map((gate) => [gate.taskId, gate.base, gate.findings])).toEqual([
      ["a", main, []],
      ["b", main, []],
      ["c", main, []],
    ]);
    expect(merges.map((gate) => gate.files)).toEqual([1, 2, 3]);
    expect(merges[0]?.counts).toEqual({
      compared: false,
      reason: "no suite runs on a wave's merge: the story's clean clone is counted once every wave merged",
    });
    const whole = gates.find((gate) => gate.taskId === "integration");
    expect(whole).toMatchObject({ base: main, findings: [], files: 4 });
    const documented = firstOf(journal, (event) => event.kind === "stage.finished" && event.stage === "documenter");
    expect(firstOf(journal, (event) => event.kind === "integrity.finished" && event.taskId === "integration")).toBeGreaterThan(documented);
  });

  it("catches a wave-1 task that deletes a test at its merge, before wave 2 runs, and runs it again told why", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH });
    const main = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const { outcome, journal } = await runScenario(s, planConfig(s, "weaken", 2), { ...story(main), workflow: storyScopedGate() });
    expect(outcome).toMatchObject({ status: "completed" });
    const caught = firstOf(journal, (event) => event.kind === "integrity.finished" && event.findings.length > 0);
    const gate = journal[caught] as Extract<HistoryEvent, { kind: "integrity.finished" }>;
    expect(gate).toMatchObject({ taskId: "a", attempt: 1, base: main });
    expect(gate.merged).toMatch(/^[0-9a-f]{40}$/);
    expect(gate.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual(["test-file-deleted test/math.test.mjs:1"]);
    // Caught after wave 1, before wave 2 started: c had not run.
    expect(caught).toBeLessThan(firstOf(journal, (event) => event.kind === "task.started" && event.taskId === "c"));
    expect(ofKind(journal, "retry.scheduled")).toEqual([
      expect.objectContaining({ taskId: "a", failedAttempt: 1, fromStage: "integrity", failureClass: "test-integrity" }),
    ]);
    // The weakened merge never reached the story branch, and the next attempt was told why.
    const subjects = (await git(["log", "--first-parent", "--format=%s", "harness/story-plan"], { cwd: s.repo })).split("\n");
    expect(subjects.filter((subject) => subject.startsWith("Merge task a:"))).toHaveLength(1);
    expect(await git(["branch", "--contains", gate.merged ?? "", "--list", "harness/story-plan"], { cwd: s.repo })).toBe("");
    const prompt = readFileSync(join(outcome.runDir, "tasks", "a", "attempts", "2", "implementer", "prompt.md"), "utf8");
    expect(prompt).toContain("- test/math.test.mjs:1: test file deleted (it held 1 test case and 1 assertion) (test-file-deleted)");
    expect(await git(["cat-file", "-e", "harness/story-plan:test/math.test.mjs"], { cwd: s.repo })).toBe("");
  });

  it("blocks the task as test-integrity at the ceiling, and wave 2 never runs", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH });
    const main = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const workflow = { ...storyScopedGate(), maxAttempts: 1 };
    const { outcome, journal } = await runScenario(s, planConfig(s, "weaken", 1), { ...story(main), workflow });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const finished = ofKind(journal, "task.finished").filter((event) => event.outcome === "blocked");
    expect(finished.map((event) => [event.taskId, event.failureClass])).toEqual([
      ["a", "test-integrity"],
      ["c", "blocked-by-dependency"],
    ]);
    expect(finished[0]?.detail).toContain("merged onto the story branch, the change weakens the test suite: test/math.test.mjs:1");
    expect(launched(s).filter((line) => line.startsWith("c "))).toEqual([]);
    // The story branch kept the test.
    expect(await git(["cat-file", "-e", "harness/story-plan:test/math.test.mjs"], { cwd: s.repo })).toBe("");
  });

  it("catches the story's documenter deleting a test after every merge was judged", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH });
    const main = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const { outcome, journal } = await runScenario(s, planConfig(s, "doc-weakens", 1), story(main));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const whole = ofKind(journal, "integrity.finished").find((gate) => gate.taskId === "integration");
    expect(whole?.findings.map((finding) => `${finding.kind} ${finding.file}`)).toEqual(["test-file-deleted test/math.test.mjs"]);
    expect(ofKind(journal, "story.blocked")[0]?.detail).toContain("on the merged story branch");
  });
});
