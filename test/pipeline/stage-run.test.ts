/**
 * One stage of one attempt through `runStage` (src/pipeline/stage.ts): its folder made, its
 * kind's step run, and `stage.started` / `stage.finished` journaled around it with the outcome.
 * A gate stage on a real suite in a real repository: no agent, no story around it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Stage } from "../../src/pipeline/index.js";
import { runStage } from "../../src/pipeline/stage.js";
import { removeTempDirs } from "../support/tmp.js";
import { makeTask } from "./task-run.js";

afterAll(removeTempDirs);

const gate: Stage = { id: "check", kind: "gate", artifacts: [], gate: "suite" };

describe("runStage", () => {
  it("runs a passing stage in its own folder, journaling its start and a passed finish with its time", async () => {
    const { task, journal } = await makeTask();
    const before = performance.now();
    expect(await runStage(task, gate, 2, undefined)).toEqual({ passed: true });
    const took = performance.now() - before;
    expect(existsSync(join(task.layout.stageDir(2, "check"), "artifacts"))).toBe(true);
    const events = journal().filter((event) => event.kind === "stage.started" || event.kind === "stage.finished");
    expect(events).toEqual([
      { kind: "stage.started", taskId: "task-demo", stage: "check", attempt: 2, at: expect.any(String) },
      { kind: "stage.finished", taskId: "task-demo", stage: "check", attempt: 2, outcome: "passed", durationMs: expect.any(Number), at: expect.any(String) },
    ]);
    const finished = events[1] as { durationMs: number };
    expect(Number.isInteger(finished.durationMs)).toBe(true);
    expect(finished.durationMs).toBeGreaterThanOrEqual(0);
    expect(finished.durationMs).toBeLessThanOrEqual(Math.ceil(took));
    // The gate ran between the two.
    expect(journal().map((event) => event.kind)).toEqual(["stage.started", "provision.succeeded", "gate.finished", "stage.finished"]);
  });

  it("journals a failed stage with its class and reason, and returns the kind's outcome", async () => {
    const { task, journal } = await makeTask({ yaml: 'test:\n  command: "exit 4"\nprovision:\n  command: "true"' });
    const outcome = await runStage(task, gate, 1, undefined);
    expect(outcome).toEqual({ passed: false, failureClass: "suite-failed", reason: "test suite `exit 4` exited 4", infrastructure: false, evidence: {} });
    expect(journal().filter((event) => event.kind === "stage.finished")).toEqual([
      {
        kind: "stage.finished",
        taskId: "task-demo",
        stage: "check",
        attempt: 1,
        outcome: "failed",
        durationMs: expect.any(Number),
        failureClass: "suite-failed",
        detail: "test suite `exit 4` exited 4",
        at: expect.any(String),
      },
    ]);
  });
});
