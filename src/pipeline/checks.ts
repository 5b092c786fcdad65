import { basename, dirname, join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../files/index.js";
import { succeeded, type ExecResult } from "../exec/index.js";
import type { SandboxedResult, SandboxStep } from "../sandbox/index.js";
import { schemas } from "../schema/index.js";
import { venvEnv } from "../workspace/index.js";
import { judgeRedGate } from "./baseline.js";
import type { CleanCloneRecord } from "./events.js";
import type { StepPolicy } from "./event-schemas.js";
import type { Stage } from "./workflow-types.js";
import { provisionConfig, type TaskRun } from "./task.js";
import type { CheckFailure } from "./check-results.js";

/** The policy a suite run went under, as journaled. */
function policyOf(result: SandboxedResult) {
  return { sandboxed: result.sandboxed, network: result.network, ...(result.net !== "none" ? { net: result.net } : {}) };
}

/** Where an attempt's in-tree suite run writes its output. */
export function suiteLogPath(task: Pick<TaskRun, "layout">, attempt: number, stageId: string): string {
  return join(task.layout.stageDir(attempt, stageId), "suite.log");
}

/**
 * Runs the repository's suite in the worktree (sandboxed, writing only the worktree, no
 * network unless the repository opts in) and keeps it as the last suite the prompts show.
 */
export async function runSuiteInWorktree(task: TaskRun, stage: Pick<Stage, "id">, attempt: number, command: string): Promise<SandboxedResult> {
  // Stryker disable next-line StringLiteral: the sandbox never reads a step's purpose
  const step: SandboxStep = { purpose: "suite", network: task.config.test.network === true, writable: [task.worktree.path] };
  const result = await task.sandbox.shell(
    command,
    {
      cwd: task.worktree.path,
      // A Python rung's .venv first on PATH: the suite imports the worktree's package, not an installed copy.
      env: { set: venvEnv(task.worktree.path, process.env.PATH ?? "") },
      timeoutMs: task.config.test.timeoutMs,
      logPath: suiteLogPath(task, attempt, stage.id),
      ...(task.signal ? { signal: task.signal } : {}),
    },
    step,
  );
  const exitCode = result.exitCode ?? undefined;
  task.lastSuite = { command, timedOut: result.timedOut, outputTail: result.tail, ...(exitCode !== undefined ? { exitCode } : {}) };
  return result;
}

/**
 * Runs the repository's suite in the worktree (the deterministic gate before a judging seat)
 * and journals `gate.finished`. Returns a failure when it did not exit 0 in time.
 */
export async function runSuiteGate(task: TaskRun, stage: Stage, attempt: number, command: string): Promise<CheckFailure | undefined> {
  const result = await runSuiteInWorktree(task, stage, attempt, command);
  const exitCode = result.exitCode ?? undefined;
  await task.sink.emit({
    kind: "gate.finished",
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    command,
    timedOut: result.timedOut,
    outputTail: result.tail,
    durationMs: result.durationMs,
    policy: policyOf(result),
    logPath: suiteLogPath(task, attempt, stage.id),
    ...(exitCode !== undefined ? { exitCode } : {}),
  });
  return judgeSuite(task, command, result);
}

/** A suite run in the worktree judged: undefined when it passed, `baseline-red` when the base fails the same way, else `suite-failed`. */
export function judgeSuite(task: TaskRun, command: string, result: ExecResult): CheckFailure | undefined {
  if (succeeded(result)) return undefined;
  // A red gate on a base that is red the same way is the base's failure, not the change's.
  const exitCode = result.exitCode ?? undefined;
  const base = judgeRedGate(task.baseline, { timedOut: result.timedOut, outputTail: result.tail, ...(exitCode !== undefined ? { exitCode } : {}) });
  if (base) return { ...base, infrastructure: true };
  // A command that cannot start fails the same way on every attempt: another attempt would only spend the budget.
  const cannotStart = cannotStartFailure(command, result);
  if (cannotStart) return cannotStart;
  return { failureClass: "suite-failed", reason: `test suite \`${command}\` ${howItEnded(result, task.config.test.timeoutMs)}` };
}

/** Exit statuses of a shell whose command could not be executed (126) or found (127). */
const CANNOT_START = new Set([126, 127]);

/**
 * An `environment` failure, blocking at once, when the suite's command could not start: a
 * deterministic failure no agent's retry changes (a tool missing from the worktree or the sandbox).
 */
export function cannotStartFailure(command: string, result: Pick<ExecResult, "exitCode" | "tail">): CheckFailure | undefined {
  if (result.exitCode === null || !CANNOT_START.has(result.exitCode)) return undefined;
  const line = result.tail.trim().split("\n").at(-1) ?? "";
  return {
    failureClass: "environment",
    reason: `the test command \`${command}\` cannot start (exit ${result.exitCode}${line ? `: ${line}` : ""}); another attempt would fail the same way`,
    infrastructure: true,
  };
}

/** How a suite that did not pass ended, in words. */
function howItEnded(result: ExecResult, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${timeoutMs} ms`;
  if (result.aborted === true) return "was stopped before it finished";
  if (result.spawnError !== undefined) return result.spawnError;
  if (result.exitCode !== null) return `exited ${result.exitCode}`;
  // Stryker disable next-line StringLiteral: exec gives a null exit code only with a signal, or with the spawnError above
  const signal = result.signal ?? "a signal";
  return `exited on ${signal}`;
}

/**
 * The most an artifact (a verdict, a plan) may weigh: they are a few KiB of JSON, and the
 * agent that writes them could leave a sparse file of gigabytes instead.
 */
export const MAX_ARTIFACT_BYTES = 1024 * 1024;

/** What reading an artifact gave: its data, or why it is missing or unusable (in words without the App's paths). */
type ArtifactRead = { data: unknown } | { missing: true } | { problem: string };

/**
 * Reads an artifact an agent left in `artifactDir`, bounded: a symlink (to the App's key, say),
 * a FIFO or a file over {@link MAX_ARTIFACT_BYTES} is refused without being read.
 */
async function readArtifactFrom(artifactDir: string, name: string): Promise<ArtifactRead> {
  let text: string;
  try {
    text = await readBoundedText(join(artifactDir, name), { maxBytes: MAX_ARTIFACT_BYTES, within: artifactDir });
  } catch (error) {
    if (!(error instanceof UnsafeFileError)) throw error;
    return error.reason === "missing" ? { missing: true } : { problem: `${name} ${error.detail}` };
  }
  try {
    return { data: JSON.parse(text) as unknown };
  } catch {
    return { problem: `${name} is not valid JSON` };
  }
}

/** Reads and validates every artifact a stage declares; the first problem is the failure. */
export async function checkArtifacts(stage: Stage, artifactDir: string): Promise<CheckFailure | undefined> {
  for (const artifact of stage.artifacts) {
    const read = await readArtifactFrom(artifactDir, artifact.name);
    if ("missing" in read)
      return { failureClass: "artifact-missing", reason: `the ${stage.seat ?? stage.id} left no ${artifact.name} in its artifact directory` };
    if ("problem" in read) return { failureClass: "artifact-invalid", reason: read.problem };
    const issues = schemas().issues(artifact.schema, read.data);
    if (issues.length > 0) {
      return { failureClass: "artifact-invalid", reason: `${artifact.name}: ${issues.map((issue) => `${issue.path} ${issue.message}`).join("; ")}` };
    }
  }
  return undefined;
}

/** Parses a JSON artifact (bounded, see {@link checkArtifacts}); undefined when it is missing, refused or not JSON. */
export async function readArtifact(path: string): Promise<unknown> {
  const read = await readArtifactFrom(dirname(path), basename(path));
  return "data" in read ? read.data : undefined;
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
    logPath: cleanCloneLogPath(task, attempt),
    ...(task.config.cleanClone.interpreter !== undefined ? { interpreter: task.config.cleanClone.interpreter } : {}),
    sandbox: task.sandbox,
    network: task.config.test.network === true,
    ...cleanCloneParity(task),
  });
  await task.deps.writeCleanCloneResult(join(attemptDir, artifact), result);
  // Absent optional fields stay absent: the record is what the JSON file holds.
  const record = JSON.parse(JSON.stringify(result)) as CleanCloneRecord;
  await task.sink.emit({
    kind: "clean_clone.finished",
    taskId: task.taskId,
    stage: stage.id,
    attempt,
    artifact,
    result: record,
    policy: cleanClonePolicy(task),
    logPath: cleanCloneLogPath(task, attempt),
  });
  return record;
}

/** The policy the clean clone's suite runs under, as journaled. */
export function cleanClonePolicy(task: TaskRun): StepPolicy {
  const network = task.sandbox.settings.enabled ? task.config.test.network === true : true;
  const net = task.sandbox.netPolicyOf(network);
  return { sandboxed: task.sandbox.settings.enabled, network, ...(net !== "none" ? { net } : {}) };
}

/** Where an attempt's clean-clone check writes its output (the integrity gate reads its test counts back). */
export function cleanCloneLogPath(task: Pick<TaskRun, "layout">, attempt: number): string {
  return join(task.layout.attemptDir(attempt), "clean-clone.log");
}

/** The CI-parity and safety settings of `clean_clone` (depth, env, provision, external symlinks) as check options. */
function cleanCloneParity(task: TaskRun) {
  const settings = task.config.cleanClone;
  return {
    ...(settings.depth !== undefined ? { depth: settings.depth } : {}),
    ...(settings.env !== undefined ? { env: { allow: settings.env } } : {}),
    ...(settings.provision === true ? { provision: { config: provisionConfig(task.config), harnessHome: task.harnessHome } } : {}),
    // Unless the repository chose (`clean_clone.provision: false` links), a workspaces repository is provisioned afresh like its worktree.
    ...(settings.provision === undefined ? { provisionWorkspaces: { config: provisionConfig(task.config), harnessHome: task.harnessHome } } : {}),
    ...(settings.allowExternalSymlinks === true ? { allowExternalSymlinks: true } : {}),
  };
}
