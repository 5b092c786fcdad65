/**
 * The baseline: the suite run once on the commit the task starts from, in a checkout of its
 * own (baseline-pending.ts runs it beside provisioning and the first seat). It decides whose
 * failure a red gate is: a base that is red the same way is infrastructure (`baseline-red`),
 * not the change's doing; a command that cannot start there (126, 127) is the environment's
 * (`environment`). Its result is kept per base (baseline-cache.ts): the next story on the same
 * base reads it instead of running the suite.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { succeeded } from "../exec/index.js";
import { git, readHeadCommit, venvEnv } from "../workspace/index.js";
import type { CheckFailure } from "./check-results.js";
import { provisionConfig, type TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";
import { stripAnsi } from "../text/index.js";
import type { BaselineResult } from "./check-results.js";
import type { SandboxedResult } from "../sandbox/index.js";
import { readLogCounts, type RunCounts } from "../integrity/index.js";
import {
  baselineCachePath,
  lockfileHash,
  lockfileHashAt,
  once,
  readCachedBaseline,
  writeCachedBaseline,
  type BaselineKey,
  type CachedBaseline,
} from "./baseline-cache.js";

/** Where the baseline runs: a checkout of the base commit of its own, opened only when the suite must run, and removed after. */
export interface BaseCheckout {
  open(commit: string): Promise<string>;
  close(path: string): Promise<void>;
}

/** Exit codes of `/bin/sh` for a command that could not start: not executable, not found. */
const CANNOT_START = new Set([126, 127]);

/** Where the baseline's output goes (the integrity gate reads its test counts back). */
export function baselineLogPath(task: Pick<TaskRun, "layout" | "worktree">): string {
  return join(task.layout.logs, `baseline-${task.worktree.taskId}.log`);
}

/** True when the baseline did not pass. */
export function baselineRed(baseline: BaselineResult): boolean {
  return !succeeded(baseline);
}

/** Whether a task runs the baseline: it has a test command and a stage that runs the suite (its gate or the clean clone). */
export function needsBaseline(stages: readonly Stage[], testCommand: string | undefined): testCommand is string {
  return testCommand !== undefined && stages.some((stage) => stage.gate === "suite" || stage.cleanClone !== undefined);
}

/**
 * Runs the configuration's suite on the task's base commit, when one of `stages` runs the
 * suite, and journals `baseline.finished`. Returns an `environment` failure when the command
 * could not start there; a red base is kept, not a failure: it only matters once the change's
 * gate is red too.
 */
export async function runBaseline(
  task: TaskRun,
  stages: readonly Stage[],
  where: { checkout: BaseCheckout; signal?: AbortSignal },
): Promise<CheckFailure | undefined> {
  const command = task.config.test.command;
  if (!needsBaseline(stages, command)) return undefined;
  // Read before anything awaits: the first seat may soon change the worktree's lockfile.
  const lockfile = lockfileHash(task.worktree.path);
  // Read from the worktree's files when they are laid out plainly: one git process less.
  const commit = readHeadCommit(task.worktree.path) ?? (await git(["rev-parse", "HEAD"], { cwd: task.worktree.path, readOnly: true }));
  const key = baselineKey(task, command, commit, lockfile);
  const kept = readCachedBaseline(task.harnessHome, key);
  if (kept !== undefined) {
    // Its tail in the task's baseline log, for whoever reads the run directory; the integrity gate takes the kept counts.
    await writeFile(baselineLogPath(task), kept.outputTail.endsWith("\n") ? kept.outputTail : `${kept.outputTail}\n`).catch(() => undefined);
    const { exitCode, outputTail, durationMs, counts } = kept;
    await keep(task, { command, commit, timedOut: false, outputTail, durationMs, exitCode, counts }, key, true);
    return undefined;
  }
  const file = baselineCachePath(task.harnessHome, key);
  const first = once(file, () => runSuiteOnBase(task, command, key, where));
  let { result, counts } = await first.promise;
  let shared = first.shared;
  // Another task's run that says nothing about the base (stopped with its story, timed out) is not this task's answer.
  if (shared && cacheable(result, counts) === undefined) {
    ({ result, counts } = await runSuiteOnBase(task, command, key, where));
    shared = false;
  }
  // Stopped before it said anything (the task ended first): no baseline to keep.
  if (where.signal?.aborted === true) return undefined;
  const exitCode = result.exitCode ?? undefined;
  const baseline: BaselineResult = {
    command,
    commit,
    timedOut: result.timedOut,
    outputTail: result.tail,
    durationMs: result.durationMs,
    ...(exitCode !== undefined ? { exitCode } : {}),
    ...(counts !== undefined ? { counts } : {}),
  };
  await keep(task, baseline, key, shared);
  if (result.spawnError !== undefined || (exitCode !== undefined && CANNOT_START.has(exitCode))) {
    const line = lastLine(result.tail);
    return {
      failureClass: "environment",
      reason: `the test command \`${command}\` cannot start in the provisioned worktree (exit ${exitCode ?? "none"}${line ? `: ${line}` : ""}); provisioning did not install what it needs`,
    };
  }
  return undefined;
}

/** The key of the baseline of `command` on `commit` under the task's sandbox policy. */
function baselineKey(task: TaskRun, command: string, commit: string, lockfiles: string): BaselineKey {
  const network = task.config.test.network === true;
  return { commit, lockfileHash: lockfiles, command, policy: { sandboxed: task.sandbox.settings.enabled, network, net: task.sandbox.netPolicyOf(network) } };
}

/**
 * The tests the suite reported on `commit` when a baseline of this task's command and policy ran
 * there before (kept in HARNESS_HOME/baselines), or undefined. For a task whose own baseline ran
 * on later work than the base it is judged against: a re-admitted story's blocked commit, a
 * later wave's merged tasks.
 */
export async function keptBaselineCounts(task: TaskRun, commit: string): Promise<RunCounts | undefined> {
  const command = task.config.test.command;
  if (command === undefined) return undefined;
  const key = baselineKey(task, command, commit, await lockfileHashAt(task.worktree.path, commit));
  return readCachedBaseline(task.harnessHome, key)?.counts;
}

/** Sets the task's baseline and journals `baseline.finished`, saying when it was not run for this task. */
async function keep(task: TaskRun, baseline: BaselineResult, key: BaselineKey, cached: boolean): Promise<void> {
  task.baseline = baseline;
  const { sandboxed, network, net } = key.policy;
  // The counts reach the journal with the integrity gate's verdict, beside the clean clone's.
  const { counts: _counts, ...journaled } = baseline;
  await task.sink.emit({
    kind: "baseline.finished",
    taskId: task.taskId,
    ...journaled,
    policy: { sandboxed, network, ...(net !== "none" ? { net } : {}) },
    ...(cached ? { cached: true as const } : {}),
  });
}

/**
 * The suite on the base, in a provisioned checkout of its own, with the same policy as the suite
 * gate, and the tests it reported (read from its whole log); a result that says something about
 * the base is kept for the next story.
 */
async function runSuiteOnBase(
  task: TaskRun,
  command: string,
  key: BaselineKey,
  where: { checkout: BaseCheckout; signal?: AbortSignal },
): Promise<{ result: SandboxedResult; counts?: RunCounts }> {
  const checkout = await where.checkout.open(key.commit);
  try {
    // Each step gives way to an agent of the task that is starting (agent-boots.ts).
    await task.agentBoots.settled();
    await task.deps.provisionWorktree({
      worktree: checkout,
      config: provisionConfig(task.config),
      taskId: task.taskId,
      logPath: join(task.layout.logs, `baseline-provision-${task.worktree.taskId}.log`),
      harnessHome: task.harnessHome,
      now: task.clock,
      sandbox: task.sandbox,
    });
    await task.agentBoots.settled();
    // The same policy as the suite gate: sandboxed, writing only its checkout, network only when the repository opts in.
    const result = await task.sandbox.shell(
      command,
      {
        cwd: checkout,
        env: { set: venvEnv(checkout, process.env.PATH ?? "") },
        timeoutMs: task.config.test.timeoutMs,
        logPath: baselineLogPath(task),
        ...(where.signal ? { signal: where.signal } : {}),
      },
      { purpose: "suite", network: key.policy.network, writable: [checkout] },
    );
    // Output that names its folder names the worktree's, as a run in the worktree would: a red gate is compared with it.
    const seen = { ...result, tail: result.tail.split(checkout).join(task.worktree.path) };
    const counts = await readLogCounts(baselineLogPath(task));
    const kept = cacheable(seen, counts);
    if (kept !== undefined && where.signal?.aborted !== true) writeCachedBaseline(task.harnessHome, key, kept);
    return { result: seen, ...(counts !== undefined ? { counts } : {}) };
  } finally {
    await where.checkout.close(checkout);
  }
}

/**
 * What is kept of a run: only one that ran to its end and could start (a timeout or 126/127 may
 * be the moment's, not the base's), and whose log was read for its counts.
 */
function cacheable(result: SandboxedResult, counts: RunCounts | undefined): CachedBaseline | undefined {
  const exitCode = result.exitCode;
  if (exitCode === null || result.timedOut || result.spawnError !== undefined || CANNOT_START.has(exitCode) || counts === undefined) return undefined;
  return { exitCode, outputTail: result.tail.slice(-65536), durationMs: result.durationMs, counts };
}

/**
 * Decides a red gate against the baseline: red on the base with the same failing output is
 * `baseline-red` (infrastructure); anything else stays the change's failure. Output with
 * nothing in it cannot show "the same failure", so it never counts as one.
 */
export function judgeRedGate(
  baseline: BaselineResult | undefined,
  change: { exitCode?: number; timedOut: boolean; outputTail: string },
): CheckFailure | undefined {
  if (!baseline || !baselineRed(baseline)) return undefined;
  if (baseline.timedOut !== change.timedOut || baseline.exitCode !== change.exitCode) return undefined;
  const base = normaliseOutput(baseline.outputTail);
  if (base === "" || base !== normaliseOutput(change.outputTail)) return undefined;
  return {
    failureClass: "baseline-red",
    reason: `the suite \`${baseline.command}\` fails the same way on the base commit ${baseline.commit.slice(0, 12)} (exit ${baseline.exitCode ?? "none"}): the base is broken, not the change`,
  };
}

/** Output as compared: no ANSI escapes, no numbers (durations, counts, ports), no blank runs. */
export function normaliseOutput(text: string): string {
  return stripAnsi(text)
    .replace(/\d+(\.\d+)?/g, "#")
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter((line) => line !== "")
    .join("\n");
}

function lastLine(text: string): string {
  return stripAnsi(text).trim().split("\n").at(-1)?.trim().slice(0, 300) ?? "";
}
