/**
 * The `integrity` stage in the pipeline: a weakened suite fails the attempt with the findings in
 * the next prompts, blocks as `test-integrity` at the ceiling, and the configuration and the
 * workflow refuse what they do not take.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadWorkflow, parseHarnessConfig, WorkflowError } from "../../src/pipeline/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

const MATH = 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("adds", () => {\n  assert.equal(1 + 2, 3);\n});\n';
const OTHER = 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("holds", () => {\n  assert.ok(true);\n});\n';

describe("the integrity stage", () => {
  it("fails each attempt whose work deletes a test file, tells the next prompt why, and blocks as test-integrity at the ceiling", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH, "test/other.test.mjs": OTHER });
    const { outcome, journal } = await runScenario(s, { ...scriptedConfig(s, "delete-test", { test: "node --test" }), maxAttempts: 2 });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const gates = ofKind(journal, "integrity.finished");
    expect(gates.map((gate) => [gate.attempt, gate.findings.map((finding) => finding.kind)])).toEqual([
      [1, ["test-file-deleted", "fewer-tests-run"]],
      [2, ["test-file-deleted", "fewer-tests-run"]],
    ]);
    expect(gates[0]?.counts).toEqual({ compared: true, base: { node: 2 }, head: { node: 1 } });
    expect(ofKind(journal, "retry.scheduled")[0]).toMatchObject({ fromStage: "integrity", failureClass: "test-integrity" });
    for (const seat of ["implementer", "tester"]) {
      const prompt = readFileSync(join(outcome.runDir, "attempts", "2", seat, "prompt.md"), "utf8");
      expect(prompt).toContain("## The suite stays the suite");
      expect(prompt).toContain("- test/math.test.mjs:1: test file deleted (it held 1 test case and 1 assertion) (test-file-deleted)");
    }
    // The implementer's prompt carries the gate's guidance too.
    expect(readFileSync(join(outcome.runDir, "attempts", "2", "implementer", "prompt.md"), "utf8")).toContain("Restore the tests");
    // The gate is the last stage of each attempt: it looked after the documenter too.
    expect(ofKind(journal, "stage.started").map((event) => `${event.stage} ${event.attempt}`)).toEqual(
      [1, 2].flatMap((attempt) => ["implementer", "tester", "verifier", "documenter", "integrity"].map((stage) => `${stage} ${attempt}`)),
    );
  });

  it("runs after the documenter: a documenter that deletes a test file is caught, and the story blocks as test-integrity", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH, "test/other.test.mjs": OTHER });
    const { outcome, journal } = await runScenario(s, { ...scriptedConfig(s, "doc-delete-test", { test: "node --test" }), maxAttempts: 1 });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const documented = journal.findIndex((event) => event.kind === "stage.finished" && event.stage === "documenter");
    const gate = journal.findIndex((event) => event.kind === "integrity.finished");
    expect(documented).toBeGreaterThan(0);
    expect(gate).toBeGreaterThan(documented);
    expect(ofKind(journal, "integrity.finished")[0]?.findings.map((finding) => `${finding.kind} ${finding.file}`)).toEqual([
      "test-file-deleted test/math.test.mjs",
    ]);
  });

  it("accepts the findings on files the configuration allows, naming it as who accepted them", async () => {
    const s = await makeScenario({ "test/math.test.mjs": MATH, "test/other.test.mjs": OTHER });
    const config = scriptedConfig(s, "delete-test", { test: "node --test", extra: 'integrity:\n  allow: ["test/math.test.mjs"]\n' });
    const { outcome, journal } = await runScenario(s, { ...config, maxAttempts: 1 });
    // The file's deletion is accepted; the suite running fewer tests is not a file's finding, so it still fails.
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    expect(ofKind(journal, "integrity.finished")[0]?.accepted).toEqual([
      expect.objectContaining({ file: "test/math.test.mjs", acceptedBy: ".github/harness.yml" }),
    ]);
  });
});

describe("integrity settings", () => {
  it("normalises integrity and refuses a typo or an unknown workflows value, naming the key", () => {
    expect(parseHarnessConfig('integrity:\n  allow: ["tests/legacy/**"]\n  workflows: allow\n', "h.yml").integrity).toEqual({
      allow: ["tests/legacy/**"],
      workflows: "allow",
    });
    expect(parseHarnessConfig("integrity: {}\n", "h.yml").integrity).toEqual({ allow: [], workflows: "hold" });
    expect(() => parseHarnessConfig("integrity:\n  alow: []\n", "h.yml")).toThrow("h.yml: $.integrity.alow is not an allowed key");
    expect(() => parseHarnessConfig("integrity:\n  workflows: maybe\n", "h.yml")).toThrow("$.integrity.workflows");
    expect(() => parseHarnessConfig('integrity:\n  allow: ["/etc/**"]\n', "h.yml")).toThrow("$.integrity.allow[0]");
  });

  it("an integrity stage refuses the options of a seat", () => {
    const dir = makeTempDir("harness-integrity-workflow-");
    const file = join(dir, "workflow.json");
    const implementer = { id: "implementer", seat: "implementer", prompt: "prompts/implementer.md" };
    writeFileSync(
      file,
      JSON.stringify({
        name: "w",
        max_attempts: 1,
        stages: [implementer, { id: "check", kind: "integrity", gate: "suite" }],
        on_failure: { retry_stage: "implementer" },
      }),
    );
    expect(() => loadWorkflow(file)).toThrow(WorkflowError);
    expect(() => loadWorkflow(file)).toThrow("$.stages[1].gate is not an option of an integrity stage ('check' compares the change with its base, no seat)");
    writeFileSync(
      file,
      JSON.stringify({ name: "w", max_attempts: 1, stages: [implementer, { id: "check", kind: "integrity" }], on_failure: { retry_stage: "implementer" } }),
    );
    expect(loadWorkflow(file).stages.map((stage) => stage.kind)).toEqual(["seat", "integrity"]);
  });

  it("refuses a seat after the integrity stage: it could change the tests after the gate looked", () => {
    const file = join(makeTempDir("harness-integrity-workflow-"), "workflow.json");
    const seat = (id: string) => ({ id, seat: id, prompt: `prompts/${id}.md` });
    writeFileSync(
      file,
      JSON.stringify({
        name: "w",
        max_attempts: 1,
        stages: [seat("implementer"), { id: "check", kind: "integrity" }, { ...seat("documenter"), scope: "story" }],
        on_failure: { retry_stage: "implementer" },
      }),
    );
    expect(() => loadWorkflow(file)).toThrow(
      "$.stages[2] seat stage 'documenter' comes after the integrity stage 'check': it could change the tests after the gate looked; put the integrity stage after every seat",
    );
  });
});
