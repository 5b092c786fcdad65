/**
 * The suite runs once per attempt, where the commit will exist: the verifier's gate is the clean
 * clone. The worktree runs it again only to classify a clean clone that failed: passing there is
 * `clean-clone-failed`, failing there too is the change's `suite-failed`.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { consoleLine } from "../../src/pipeline/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, q, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

/** A test command that appends where it ran (the base has no feature.txt; the change has) to `marker`, then runs `suite`. */
function countingSuite(marker: string, suite: string): string {
  return `if test -f feature.txt; then echo change >> ${q(marker)}; else echo base >> ${q(marker)}; fi; ${suite}`;
}

/** The lines the counting suite appended. */
const runsIn = (marker: string): string[] =>
  readFileSync(marker, "utf8")
    .split("\n")
    .filter((line) => line !== "");

describe("the suite once per attempt", () => {
  it("runs the suite exactly once on the change of a passing story: in the clean clone, which the verifier judges", async () => {
    const s = await makeScenario();
    // In the folder the scenario's sandbox lets every step write.
    const marker = join(dirname(s.launches), "suite-runs.log");
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test: countingSuite(marker, "test -f feature.txt") }));
    expect(outcome.status).toBe("completed");
    // Once on the base (the baseline), once on the change: no in-tree gate beside the clean clone.
    expect(runsIn(marker).sort()).toEqual(["base", "change"]);
    const [gate] = ofKind(journal, "gate.finished");
    expect(gate).toMatchObject({ stage: "verifier", where: "clean-clone", exitCode: 0 });
    expect(gate?.worktree).toBeUndefined();
    expect(gate && consoleLine(gate)).toContain("the suite ran once, in the clean clone");
    // The verifier was shown the clean clone's run.
    const prompt = readFileSync(join(outcome.runDir, "attempts", "1", "verifier", "prompt.md"), "utf8");
    expect(prompt).toContain("already passed in a fresh clone");
  });

  it("calls a change that passes in the worktree but fails in the clean clone clean-clone-failed, from the in-tree re-run", async () => {
    const s = await makeScenario();
    const marker = join(dirname(s.launches), "suite-runs.log");
    // Fails in a clean clone only: the committed change has no uncommitted files to show.
    const config = scriptedConfig(s, "complete", { test: countingSuite(marker, 'test -f feature.txt && test -n "$(git status --porcelain)"') });
    config.maxAttempts = 1;
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(outcome.detail).toContain("(clean-clone-failed)");
    expect(ofKind(journal, "stage.finished").at(-1)).toMatchObject({ stage: "verifier", failureClass: "clean-clone-failed" });
    // The base, the clean clone, then the worktree to classify it.
    expect(runsIn(marker).sort()).toEqual(["base", "change", "change"]);
    const [gate] = ofKind(journal, "gate.finished");
    expect(gate).toMatchObject({ where: "clean-clone", exitCode: 1, worktree: { exitCode: 0, timedOut: false } });
    expect(gate && consoleLine(gate)).toContain("the clean clone failed; the suite was re-run in the worktree: it passed");
    // The verifier's seat is not spent on a change that failed its gate.
    expect(launches(s)).toEqual(["implementer 1", "tester 1"]);
  });

  it("calls a change that fails in the clean clone and in the worktree suite-failed", async () => {
    const s = await makeScenario();
    const marker = join(dirname(s.launches), "suite-runs.log");
    // Red on the change everywhere, and red differently on the base (no feature.txt there to print).
    const config = scriptedConfig(s, "complete", { test: countingSuite(marker, "cat feature.txt 2>&1; grep -q goodbye feature.txt") });
    config.maxAttempts = 1;
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(ofKind(journal, "stage.finished").at(-1)).toMatchObject({ stage: "verifier", failureClass: "suite-failed" });
    expect(runsIn(marker).sort()).toEqual(["base", "change", "change"]);
    const [gate] = ofKind(journal, "gate.finished");
    expect(gate).toMatchObject({ where: "clean-clone", exitCode: 1, worktree: { exitCode: 1 } });
    expect(gate && consoleLine(gate)).toContain("re-run in the worktree: it failed (exit 1)");
    expect(ofKind(journal, "clean_clone.finished")[0]?.result).toMatchObject({ ran: true, exitCode: 1 });
    expect(launches(s)).toEqual(["implementer 1", "tester 1"]);
  });
});
