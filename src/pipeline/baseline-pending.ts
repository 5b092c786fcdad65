/**
 * The baseline off the critical path: it starts as soon as the task's worktree exists, in a
 * checkout of the base commit of its own, and runs beside the task's provisioning and its first
 * seat. Its answer is awaited before anything that needs it (the task's second stage, or a first
 * stage that runs the suite), so a base on which the test command cannot start still blocks
 * before a second seat is spent.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { currentStepScope, runInStepScope } from "../exec/index.js";
import { needsBaseline, runBaseline, type BaseCheckout } from "./baseline.js";
import type { CheckFailure, PendingBaseline } from "./check-results.js";
import type { TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";

/** How much nicer than the App the baseline's processes run (nice caps the result at 19). */
const BASELINE_NICENESS = 10;

/**
 * Starts the baseline of `task` when one of `stages` runs the suite (journaled as
 * `baseline.started`); undefined when none does. It never rejects: a baseline that could not
 * run (its checkout, its provisioning) leaves the task without one, noted in the coordinator's log.
 */
export function startBaseline(task: TaskRun, stages: readonly Stage[], checkout: BaseCheckout): PendingBaseline | undefined {
  if (!needsBaseline(stages, task.config.test.command)) return undefined;
  const stopper = new AbortController();
  const signal = task.signal ? AbortSignal.any([task.signal, stopper.signal]) : stopper.signal;
  // Every process of the baseline (its checkout's git, provisioning, the suite) runs niced: it is off
  // the critical path, beside the first seat, whose agent's start (a CPU-bound boot) goes first on a
  // small host. Measured (bench/agents, 2 cores): the implementer's launch → first request was 1.3–1.5×
  // its bare run with the baseline beside it at the same priority, 1.10× without it. Niced, it was still
  // 1.26–1.31×: its provisioning and suite now also wait out the agent's start (agent-boots.ts).
  const answer = runInStepScope({ ...currentStepScope(), niceness: BASELINE_NICENESS }, async (): Promise<CheckFailure | undefined> => {
    await task.sink.emit({ kind: "baseline.started", taskId: task.taskId });
    return runBaseline(task, stages, { checkout, signal });
  }).catch((error: unknown) => {
    if (!stopper.signal.aborted) appendFileSync(join(task.layout.logs, "coordinator.log"), `baseline of ${task.taskId} could not run: ${String(error)}\n`);
    return undefined;
  });
  return {
    settle: () => answer,
    stop: async () => {
      stopper.abort();
      await answer;
    },
  };
}

/** True when `stage` may run while the baseline is still under way: a plain seat, which neither runs the suite nor judges it. */
export function overlapsBaseline(stage: Stage): boolean {
  return stage.kind === "seat" && stage.gate === undefined && stage.cleanClone === undefined && stage.verdict === undefined;
}
