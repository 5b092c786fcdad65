import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { succeeded, type ExecResult } from "../exec/index.js";
import type { SandboxStep } from "../sandbox/index.js";
import { schemas } from "../schema/index.js";
import { judgeRedGate } from "./baseline.js";
import type { CleanCloneRecord, FailureClass } from "./events.js";
import type { Stage } from "./workflow.js";
import { provisionConfig, type TaskRun } from "./task.js";

/** A failed check: its class and a one-line reason a maintainer can act on. */
export interface CheckFailure {
  failureClass: FailureClass;
  reason: string;
  /** Not the change's doing (a base that is red the same way): blocks instead of retrying. */
  infrastructure?: boolean;
}

/**
 * Runs the repository's suite in the worktree (the deterministic gate before a judging seat)
 * and journals `gate.finished`. Returns a failure when it did not exit 0 in time.
 */
export async function runSuiteGate(task: TaskRun, stage: Stage, attempt: number, command: string): Promise<CheckFailure | undefined> {
  // Sandboxed, writing only the worktree; no network unless the repository opts in (test.network).
  // Stryker disable next-line StringLiteral: the sandbox never reads a step's purpose
  const step: SandboxStep = { purpose: "suite", network: task.config.test.network === true, writable: [task.worktree.path] };
  const result = await task.sandbox.shell(command, {
    cwd: task.worktree.path,
    timeoutMs: task.config.test.timeoutMs,
    logPath: join(task.layout.stageDir(attempt, stage.id), "suite.log"),
    ...(task.signal ? { signal: task.signal } : {}),
  }, step);
  const exitCode = result.exitCode ?? undefined;
  task.lastSuite = { command, timedOut: result.timedOut, outputTail: result.tail, ...(exitCode !== undefined ? { exitCode } : {}) };
  await task.sink.emit({
    kind: "gate.finished",
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    command,
    timedOut: result.timedOut,
    outputTail: result.tail,
    durationMs: result.durationMs,
    policy: { sandboxed: result.sandboxed, network: result.network, ...(result.net !== "none" ? { net: result.net } : {}) },
    ...(exitCode !== undefined ? { exitCode } : {}),
  });
  if (succeeded(result)) return undefined;
  // A red gate on a base that is red the same way is the base's failure, not the change's.
  const base = judgeRedGate(task.baseline, task.lastSuite);
  if (base) return { ...base, infrastructure: true };
  return { failureClass: "suite-failed", reason: `test suite \`${command}\` ${howItEnded(result, task.config.test.timeoutMs)}` };
}

/** How a suite that did not pass ended, in words. */
function howItEnded(result: ExecResult, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${timeoutMs} ms`;
  if (result.spawnError !== undefined) return result.spawnError;
  if (result.exitCode !== null) return `exited ${result.exitCode}`;
  // Stryker disable next-line StringLiteral: exec gives a null exit code only with a signal, or with the spawnError above
  const signal = result.signal ?? "a signal";
  return `exited on ${signal}`;
}

/** Reads and validates every artifact a stage declares; the first problem is the failure. */
export function checkArtifacts(stage: Stage, artifactDir: string): CheckFailure | undefined {
  for (const artifact of stage.artifacts) {
    const path = join(artifactDir, artifact.name);
    if (!existsSync(path)) return { failureClass: "artifact-missing", reason: `the ${stage.seat ?? stage.id} left no ${artifact.name} in its artifact directory` };
    const data = readArtifact(path);
    if (data === undefined) return { failureClass: "artifact-invalid", reason: `${artifact.name} is not valid JSON` };
    const issues = schemas().issues(artifact.schema, data);
    if (issues.length > 0) {
      return { failureClass: "artifact-invalid", reason: `${artifact.name}: ${issues.map((issue) => `${issue.path} ${issue.message}`).join("; ")}` };
    }
  }
  return undefined;
}

/** Parses a JSON artifact; undefined when it is not JSON. */
export function readArtifact(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    // Not there, or not JSON.
  }
  return undefined;
}

/**
 * Runs the clean-clone check the stage declares, writes its result into the attempt's folder
 * under the declared name, and journals it. The result is returned as it was recorded.
 */
export async function runCleanClone(task: TaskRun, stage: Pick<Stage, "id">, attempt: number, artifact: string, command: string): Promise<CleanCloneRecord> {
  const attemptDir = task.layout.attemptDir(attempt);
  const result = await task.deps.runCleanCloneCheck({
    repo: task.worktree.path,
    command,
    ...(task.config.cleanClone.link !== undefined ? { links: task.config.cleanClone.link } : {}),
    timeoutMs: task.config.test.timeoutMs,
    logPath: join(attemptDir, "clean-clone.log"),
    ...(task.config.cleanClone.interpreter !== undefined ? { interpreter: task.config.cleanClone.interpreter } : {}),
    sandbox: task.sandbox,
    network: task.config.test.network === true,
    ...cleanCloneParity(task),
  });
  await task.deps.writeCleanCloneResult(join(attemptDir, artifact), result);
  // Absent optional fields stay absent: the record is what the JSON file holds.
  const record = JSON.parse(JSON.stringify(result)) as CleanCloneRecord;
  const network = task.sandbox.settings.enabled ? task.config.test.network === true : true;
  const net = task.sandbox.netPolicyOf(network);
  const policy = { sandboxed: task.sandbox.settings.enabled, network, ...(net !== "none" ? { net } : {}) };
  await task.sink.emit({ kind: "clean_clone.finished", taskId: task.taskId, stage: stage.id, attempt, artifact, result: record, policy });
  return record;
}

/** The CI-parity and safety settings of `clean_clone` (depth, env, provision, external symlinks) as check options. */
function cleanCloneParity(task: TaskRun) {
  const settings = task.config.cleanClone;
  return {
    ...(settings.depth !== undefined ? { depth: settings.depth } : {}),
    ...(settings.env !== undefined ? { env: { allow: settings.env } } : {}),
    ...(settings.provision === true ? { provision: { config: provisionConfig(task.config), harnessHome: task.harnessHome } } : {}),
    ...(settings.allowExternalSymlinks === true ? { allowExternalSymlinks: true } : {}),
  };
}
