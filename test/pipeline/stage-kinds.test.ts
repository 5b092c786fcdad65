import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { declaredChecks, loadWorkflow, WorkflowError } from "../../src/pipeline/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

const implementer = { id: "implementer", seat: "implementer", prompt: "prompts/implementer.md" };

/** Writes a workflow of `stages` (prompts resolve from the harness's own folder). */
function workflowFile(stages: unknown[], maxAttempts = 1): string {
  const path = join(makeTempDir("harness-kinds-"), "workflow.json");
  writeFileSync(path, JSON.stringify({ name: "kinds", max_attempts: maxAttempts, stages, on_failure: { retry_stage: "implementer" } }));
  return path;
}
const refusal = (stages: unknown[]): string => {
  const path = workflowFile(stages);
  try {
    loadWorkflow(path);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowError);
    return (error as Error).message.slice(path.length + 2);
  }
  throw new Error("the workflow loaded");
};

describe("the review, gate and clean-clone stage kinds", () => {
  it("load from a workflow that names them, with the kinds' defaults, and declare their own check runs", () => {
    const workflow = loadWorkflow(
      workflowFile([
        implementer,
        { id: "review", kind: "review", seat: "reviewer", prompt: "prompts/reviewer.md", on_fail: { fix: { seat: "fixer", max_rounds: 2 } } },
        { id: "suite", kind: "gate", on_fail: { fix: { seat: "fixer", max_rounds: 1 } } },
        { id: "fresh", kind: "clean-clone" },
      ]),
    );
    expect(workflow.stages.map((stage) => [stage.id, stage.kind, stage.seat])).toEqual([
      ["implementer", "seat", "implementer"],
      ["review", "review", "reviewer"],
      ["suite", "gate", undefined],
      ["fresh", "clean-clone", undefined],
    ]);
    expect(workflow.stages[1]).toMatchObject({
      verdict: "review.json",
      artifacts: [{ name: "review.json", schema: "verdict" }],
      fix: { seat: "fixer", maxRounds: 2 },
    });
    expect(workflow.stages[1]?.template).toContain("{{artifact_dir}}/review.json");
    expect(workflow.stages[2]).toMatchObject({ gate: "suite", artifacts: [], fix: { seat: "fixer", maxRounds: 1 } });
    expect(workflow.stages[2]?.fix?.template).toContain("You are the fixer");
    expect(workflow.stages[3]).toMatchObject({ cleanClone: "clean-clone-result.json", artifacts: [] });
    expect(declaredChecks(workflow)).toEqual([
      { stage: "review", kind: "review" },
      { stage: "suite", kind: "gate" },
      { stage: "fresh", kind: "clean-clone" },
    ]);
  });

  it("refuse what their kind does not take, naming the stage and the field", () => {
    const fix = { fix: { seat: "fixer", max_rounds: 1 } };
    expect(refusal([{ ...implementer, on_fail: fix }])).toBe(
      "$.stages[0].on_fail is not an option of a seat stage ('implementer'): a fix ladder belongs to a stage of kind 'review' (a failing review) or 'gate' (a red suite)",
    );
    expect(refusal([implementer, { id: "look", kind: "review", prompt: "prompts/reviewer.md" }])).toBe(
      "$.stages[1].seat is required: stage 'look' of kind 'review' runs an agent seat",
    );
    expect(refusal([implementer, { id: "look", kind: "review", seat: "reviewer", prompt: "prompts/reviewer.md", gate: "suite" }])).toMatch(
      /^\$\.stages\[1\]\.gate is not an option of a review stage \('look'/,
    );
    expect(refusal([implementer, { id: "suite", kind: "gate", seat: "gatekeeper" }])).toBe(
      "$.stages[1].seat is not an option of a gate stage ('suite' runs no seat)",
    );
    expect(refusal([implementer, { id: "suite", kind: "gate", verdict: "v.json" }])).toMatch(/^\$\.stages\[1\]\.verdict is not an option of a gate stage/);
    expect(refusal([implementer, { id: "fresh", kind: "clean-clone", prompt: "prompts/verifier.md" }])).toBe(
      "$.stages[1].prompt is not an option of a clean-clone stage ('fresh' runs no seat)",
    );
    expect(refusal([implementer, { id: "fresh", kind: "clean-clone", on_fail: fix }])).toMatch(
      /^\$\.stages\[1\]\.on_fail is not an option of a clean-clone stage/,
    );
    expect(refusal([implementer, { id: "fresh", kind: "clean-clone", scope: "story" }])).toMatch(
      /^\$\.stages\[1\]\.scope of clean-clone stage 'fresh' cannot be 'story'/,
    );
    expect(refusal([{ id: "implementer", seat: "implementer" }])).toBe("$.stages[0].prompt is required: stage 'implementer' of kind 'seat' runs an agent seat");
    expect(refusal([implementer, { id: "look", kind: "reviewer", seat: "reviewer", prompt: "prompts/reviewer.md" }])).toBe(
      "$.stages[1].kind of stage 'look' names no stage kind ('reviewer'); the kinds are clean-clone, gate, integrity, planner, review, seat",
    );
  });

  it("run a gate and a clean-clone check as stages of their own: red in a fresh clone fails the attempt, and the next one gets the result", async () => {
    // The first implementer makes the suite pass in the worktree with a file .gitignore keeps out of the commit.
    const s = await makeScenario();
    const path = workflowFile([implementer, { id: "suite", kind: "gate" }, { id: "fresh", kind: "clean-clone", clean_clone: "fresh.json" }], 2);
    const config = scriptedConfig(s, "clean-clone", { test: "test -f generated/data.txt" });
    const { outcome, journal } = await runScenario(s, config, { workflow: loadWorkflow(path) });
    expect([outcome.status, outcome.detail]).toEqual(["completed", undefined]);
    expect(ofKind(journal, "gate.finished").map((event) => [event.stage, event.attempt, event.exitCode])).toEqual([
      ["suite", 1, 0],
      ["suite", 2, 0],
    ]);
    const clean = ofKind(journal, "clean_clone.finished");
    expect(clean.map((event) => [event.stage, event.attempt, event.artifact, event.result.ran, event.result.exitCode === 0])).toEqual([
      ["fresh", 1, "fresh.json", true, false],
      ["fresh", 2, "fresh.json", true, true],
    ]);
    expect(ofKind(journal, "retry.scheduled").map((event) => [event.fromStage, event.failureClass])).toEqual([["fresh", "clean-clone-failed"]]);
    expect(JSON.parse(readFileSync(join(outcome.runDir, "attempts", "2", "fresh.json"), "utf8"))).toMatchObject({ ran: true, exitCode: 0 });
    // Only the implementer is a seat (its second launch read the clean clone's result): the gate and the clean clone launch no agent.
    expect(launches(s)).toEqual(["implementer 1", "implementer 2"]);
  });
});
