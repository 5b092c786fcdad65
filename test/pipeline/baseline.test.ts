/**
 * The baseline decides whose failure a red gate is: the base's (`baseline-red`, blocked at
 * once), the environment's (`environment`, before a second agent), or the change's (retried).
 */
import { judgeRedGate, normaliseOutput } from "../../src/pipeline/baseline.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

describe("the baseline run", () => {
  it("blocks as environment, before a second agent, when the test command cannot start on the base", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: "kcd-scripts test" }));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "environment" });
    expect(outcome.detail).toContain("`kcd-scripts test` cannot start");
    expect(outcome.detail).toContain("exit 127");
    // The baseline runs beside the implementer; its answer comes before the second stage.
    expect(launches(s)).toEqual(["implementer 1"]);
    expect(ofKind(journal, "stage.started").map((event) => event.stage)).toEqual(["implementer"]);
    // The base commit the task's worktree started from (read from the worktree's ref file).
    expect(ofKind(journal, "baseline.finished")[0]).toMatchObject({
      command: "kcd-scripts test",
      exitCode: 127,
      commit: await git(["rev-parse", "main"], { cwd: s.repo }),
    });
  });

  it("blocks as baseline-red, without retrying the agents, when the base fails the same way", async () => {
    const s = await makeScenario();
    const test = "echo 'FAIL test/legacy.test.js: expected 1, received 2 (12 ms)'; exit 1";
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test }));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "baseline-red" });
    expect(outcome.detail).toMatch(/fails the same way on the base commit [0-9a-f]{12}/);
    expect(launches(s)).toEqual(["implementer 1", "tester 1"]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(ofKind(journal, "baseline.finished")[0]).toMatchObject({ exitCode: 1, outputTail: expect.stringContaining("legacy.test.js") });
  });

  it("never blocks a green change on a red base", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: "ls; test -f feature.txt" }));
    expect(outcome.status).toBe("completed");
    expect(ofKind(journal, "baseline.finished")[0]).toMatchObject({ exitCode: 1 });
  });

  it("keeps a change that fails differently from the base the change's failure, retried as before", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: "cat feature.txt 2>&1; grep -q goodbye feature.txt" }));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(ofKind(journal, "retry.scheduled").map((event) => event.failureClass)).toEqual(["suite-failed", "suite-failed"]);
  });
});

describe("judgeRedGate", () => {
  const base = {
    command: "npm test",
    commit: "a".repeat(40),
    exitCode: 1,
    timedOut: false,
    outputTail: "\u001b[31mFAIL\u001b[0m a.test.js (31 ms)\nTests: 1 failed, 4 passed",
    durationMs: 9,
  };
  it("matches the same failure through colours and timings, and nothing else", () => {
    expect(judgeRedGate(base, { exitCode: 1, timedOut: false, outputTail: "FAIL a.test.js (48 ms)\nTests: 1 failed, 4 passed\n" })?.failureClass).toBe(
      "baseline-red",
    );
    expect(judgeRedGate(base, { exitCode: 1, timedOut: false, outputTail: "FAIL b.test.js (48 ms)\nTests: 1 failed, 4 passed" })).toBeUndefined();
    expect(judgeRedGate(base, { exitCode: 2, timedOut: false, outputTail: base.outputTail })).toBeUndefined();
    expect(judgeRedGate({ ...base, exitCode: 0 }, { exitCode: 1, timedOut: false, outputTail: base.outputTail })).toBeUndefined();
    expect(judgeRedGate({ ...base, outputTail: "" }, { exitCode: 1, timedOut: false, outputTail: "" })).toBeUndefined();
    expect(judgeRedGate(undefined, { exitCode: 1, timedOut: false, outputTail: base.outputTail })).toBeUndefined();
    expect(normaliseOutput("  Time: 1.5 s \n\n")).toBe("Time: # s");
  });
});
