import { appendFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sandboxFromEnv } from "../sandbox/index.js";
import { CleanCloneOptionsError, ProvisionConfigError, taskWorktreePath, WorkspaceProvisionError } from "../workspace/index.js";
import { storyCommitMessage, commitWorktree } from "./commit.js";
import type { RetryEvidence } from "./context.js";
import { defaultDeps } from "./deps.js";
import { ConfigError } from "./errors.js";
import type { FailureClass } from "./events.js";
import { Journal } from "./journal.js";
import { archiveAttempt, createRunLayout, newRunId } from "./run-dir.js";
import { checkRunnable } from "./runnable.js";
import { EventSink } from "./sink.js";
import { runStage } from "./stage.js";
import { ensureProvisioned, type TaskRun } from "./task.js";
import type { RunStoryArgs, StoryOutcome } from "./types.js";

/**
 * Takes a story through its workflow in a fresh, provisioned task worktree and returns how it
 * ended. Failed attempts go back to the workflow's retry stage until the attempt ceiling;
 * infrastructure failures (provisioning, a clean-clone check that could not run) block at
 * once. Every step is journaled in the run directory and handed to the reporter. The
 * outcome is always committed to the story branch; the worktree is removed afterwards.
 */
export async function runStory(args: RunStoryArgs): Promise<StoryOutcome> {
  const clock = args.clock ?? (() => new Date());
  const deps = { ...defaultDeps(), ...args.deps };
  const sandbox = args.sandbox ?? sandboxFromEnv();
  const runId = newRunId(clock());
  const layout = createRunLayout(args.harnessHome, args.story.id, runId);
  const sink = new EventSink(new Journal(layout.journal), args.reporter, join(layout.logs, "reporter.log"), clock);
  const taskId = `task-${runId}`;
  const maxAttempts = args.config.maxAttempts ?? args.workflow.maxAttempts;
  const outcomeBase = { branch: args.branch, runDir: layout.root, worktree: taskWorktreePath(args.harnessHome, args.story.id, taskId) };
  await sink.emit({
    kind: "run.started",
    storyId: args.story.id,
    runId,
    taskId,
    title: args.story.title,
    stages: args.workflow.stages.map((stage) => stage.id),
    maxAttempts,
    readmission: args.readmission ?? false,
    ...(sandbox.settings.enabled ? {} : { unsandboxed: true as const }),
  });

  let testCommand: string | undefined;
  try {
    testCommand = checkRunnable(args.config, args.workflow, args.agentEnvAllow, "configuration").testCommand;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    await sink.emit({ kind: "story.blocked", taskId, failureClass: "config-invalid", detail: error.message });
    return { ...outcomeBase, status: "blocked", failureClass: "config-invalid", detail: error.message };
  }

  let task: TaskRun | undefined;
  const block = async (failureClass: FailureClass, detail: string): Promise<StoryOutcome> => {
    let commit: string | undefined;
    if (task) {
      try {
        // With no agent launched there is no work: an empty commit records the outcome.
        commit = await commitWorktree(task.worktree.path, storyCommitMessage(args.story, failureClass, detail), { stage: task.seatsLaunched > 0 });
      } catch (error) {
        appendFileSync(join(layout.logs, "coordinator.log"), `commit of blocked work failed: ${String(error)}\n`);
      }
    }
    await sink.emit({ kind: "story.blocked", taskId, failureClass, detail, ...(commit ? { branch: args.branch, commit } : {}) });
    await removeQuietly();
    return { ...outcomeBase, status: "blocked", failureClass, detail, ...(commit ? { commit } : {}) };
  };
  const removeQuietly = async (): Promise<void> => {
    if (!task) return;
    try {
      await deps.removeTaskWorktree(args.repoDir, task.worktree.path);
    } catch (error) {
      appendFileSync(join(layout.logs, "coordinator.log"), `worktree removal failed: ${String(error)}\n`);
    }
  };

  try {
    const worktree = await deps.createTaskWorktree({
      repoDir: args.repoDir,
      harnessHome: args.harnessHome,
      storyId: args.story.id,
      taskId,
      branch: args.branch,
      baseRef: args.baseRef,
    });
    const allowed = new Set(args.agentEnvAllow);
    task = {
      story: args.story,
      config: args.config,
      workflow: args.workflow,
      maxAttempts,
      layout,
      worktree,
      deps,
      sink,
      harnessHome: args.harnessHome,
      agentEnv: args.config.agent.env.filter((name) => allowed.has(name)),
      clock,
      sandbox,
      seatsLaunched: 0,
      ...(args.signal ? { signal: args.signal } : {}),
    };
    await sink.emit({ kind: "worktree.created", taskId, worktree: worktree.path, branch: worktree.branch, base: worktree.base });
    await ensureProvisioned(task, "worktree");
    return await runAttempts(task, args, testCommand, block);
  } catch (error) {
    if (error instanceof WorkspaceProvisionError) {
      await sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
      const how = error.exitCode === null ? "did not finish" : `exited ${error.exitCode}`;
      // The detail reaches commit messages and GitHub: the log is named relative to the run
      // directory, never by a path of the App's machine.
      return block("workspace-provision-failed", `provisioning \`${error.cmd ?? "(none)"}\` ${how}; log: ${relative(layout.root, error.logPath)} in the run directory`);
    }
    if (error instanceof ProvisionConfigError || error instanceof CleanCloneOptionsError) return block("config-invalid", error.message);
    if (args.signal?.aborted) return block("interrupted", "the run was stopped");
    return block("internal-error", error instanceof Error ? error.message : String(error));
  }
}

type Block = (failureClass: FailureClass, detail: string) => Promise<StoryOutcome>;

/** The stage machine: stage by stage, rerouting failed attempts to the retry stage. */
async function runAttempts(task: TaskRun, args: RunStoryArgs, testCommand: string | undefined, block: Block): Promise<StoryOutcome> {
  const { stages, retryStage } = task.workflow;
  const taskId = task.worktree.taskId;
  const retryIndex = stages.findIndex((stage) => stage.id === retryStage);
  let attempt = 1;
  let index = 0;
  let retry: RetryEvidence | undefined;
  while (index < stages.length) {
    if (args.signal?.aborted) return block("interrupted", "the run was stopped");
    const stage = stages[index];
    if (!stage) break;
    const outcome = await runStage(task, stage, attempt, retry, testCommand);
    // A stop request ends the story as interrupted, not as an agent failure to retry.
    if (args.signal?.aborted) return block("interrupted", `the run was stopped during ${stage.id}, attempt ${attempt}`);
    if (outcome.passed) {
      index += 1;
      continue;
    }
    if (outcome.infrastructure) return block(outcome.failureClass, outcome.reason);
    const at = task.clock().toISOString();
    const archiveDir = archiveAttempt(task.layout, attempt, { stage: stage.id, failureClass: outcome.failureClass, reason: outcome.reason, at });
    await task.sink.emit({ kind: "attempt.archived", taskId, attempt, archiveDir });
    if (attempt >= task.maxAttempts) {
      return block("retry-ceiling", `attempt ${attempt} of ${task.maxAttempts} failed at ${stage.id} (${outcome.failureClass}): ${outcome.reason}`);
    }
    await task.sink.emit({
      kind: "retry.scheduled",
      taskId,
      failedAttempt: attempt,
      nextAttempt: attempt + 1,
      fromStage: stage.id,
      retryStage,
      failureClass: outcome.failureClass,
      reason: outcome.reason,
    });
    retry = { attempt, stage: stage.id, failureClass: outcome.failureClass, reason: outcome.reason, ...outcome.evidence };
    attempt += 1;
    index = retryIndex;
  }
  const commit = await commitWorktree(task.worktree.path, storyCommitMessage(task.story), { stage: true });
  await task.sink.emit({ kind: "story.completed", taskId, branch: task.worktree.branch, commit });
  try {
    await task.deps.removeTaskWorktree(args.repoDir, task.worktree.path);
  } catch (error) {
    appendFileSync(join(task.layout.logs, "coordinator.log"), `worktree removal failed: ${String(error)}\n`);
  }
  return { status: "completed", branch: task.worktree.branch, commit, runDir: task.layout.root, worktree: task.worktree.path };
}
