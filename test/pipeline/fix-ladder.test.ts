import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadWorkflow, parseHarnessConfig } from "../../src/pipeline/index.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, q, runScenario, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

const FIX_AGENT = fileURLToPath(new URL("../fixtures/agents/fix-agent.sh", import.meta.url));

function workflow(s: Scenario, maxRounds: number): string {
  const path = join(s.dir, "fix-workflow.json");
  const fix = { fix: { seat: "fixer", max_rounds: maxRounds } };
  writeFileSync(
    path,
    JSON.stringify({
      name: "fix ladders",
      max_attempts: 1,
      stages: [
        { id: "implementer", seat: "implementer", prompt: "prompts/implementer.md" },
        { id: "review", kind: "review", seat: "reviewer", prompt: "prompts/reviewer.md", on_fail: fix },
        { id: "check", kind: "gate", on_fail: fix },
      ],
      on_failure: { retry_stage: "implementer" },
    }),
  );
  return path;
}

function config(s: Scenario) {
  return parseHarnessConfig(
    [
      `agent:\n  command: ${JSON.stringify(`sh ${q(FIX_AGENT)} ${q(s.launches)}`)}`,
      'test:\n  command: "test -f gate.txt"',
      'provision:\n  command: "true"',
    ].join("\n"),
    "harness.yml",
  );
}

describe("fix ladders of the review and gate kinds", () => {
  it("sends a failing review to the fixer and reviews again, and a failed gate to the fixer and runs the gate again, inside one attempt", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, config(s), { workflow: loadWorkflow(workflow(s, 2)) });
    expect([outcome.status, outcome.detail]).toEqual(["completed", undefined]);
    expect(readFileSync(s.launches, "utf8").trim().split("\n")).toEqual(["implementer 1", "review 1", "fixer 1", "review 1", "fixer 1"]);
    expect(ofKind(journal, "fix.finished").map((event) => [event.stage, event.round, event.fixing, event.outcome])).toEqual([
      ["review", 1, "verdict-fail", "passed"],
      ["check", 1, "suite-failed", "passed"],
    ]);
    expect(ofKind(journal, "verdict.recorded").map((event) => event.verdict)).toEqual(["fail", "pass"]);
    expect(ofKind(journal, "gate.finished").map((event) => event.exitCode)).toEqual([1, 0]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    const files = (await git(["ls-tree", "-r", "--name-only", outcome.commit ?? ""], { cwd: s.repo })).split("\n");
    expect(files).toEqual(expect.arrayContaining(["gate.txt", "review-fixed.txt"]));
  });

  it("fails the attempt once the rounds are used up", async () => {
    const s = await makeScenario();
    const cfg = config(s);
    // The fixer of the gate does nothing useful here: its prompt never names gate.txt.
    cfg.test.command = "test -f never.txt";
    const { outcome, journal } = await runScenario(s, cfg, { workflow: loadWorkflow(workflow(s, 1)) });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(ofKind(journal, "fix.finished").map((event) => [event.stage, event.outcome, event.failureClass])).toEqual([
      ["review", "passed", undefined],
      ["check", "failed", "agent-exit"],
    ]);
  });
});
