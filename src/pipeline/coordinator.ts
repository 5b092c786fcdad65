import { appendFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sandboxFromEnv } from "../sandbox/index.js";
import { taskWorktreePath, WorkspaceProvisionError } from "../workspace/index.js";
import { needsBaseline, runBaseline } from "./baseline.js";
import { storyCommitMessage, commitWorktree } from "./commit.js";
import { defaultDeps } from "./deps.js";
import type { FailureClass } from "./events.js";
import { failureClassOf } from "./failure-class.js";
import { Journal } from "./journal.js";
import { runAttempts } from "./attempts.js";
import { createRunLayout, newRunId } from "./run-dir.js";
import { preflight, PreflightError } from "./preflight/index.js";
import { EventSink } from "./sink.js";
import { ensureProvisioned, type TaskRun } from "./task.js";
import type { RunStoryArgs, StoryOutcome } from "./types.js";
import { runStartedEvent } from "./run-started.js";
import { planStages } from "./workflow.js";
import { ConfigError, PlanError } from "./errors.js";
import { PLAN_FENCE, readStoryPlan, type Plan } from "./plan.js";
import { runPlannedStory } from "./plan-story.js";

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
  // The plan is read before anything runs: a refused plan never gets a worktree.
  let plan: Plan | undefined;
  let planError: PlanError | undefined;
  try {
    plan = readStoryPlan(args.story.body, `the story's ${PLAN_FENCE} block`);
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    planError = error;
  }
  // A workflow that starts with a planner runs as a plan even when the story brings none.
  const planning = planStages(args.workflow).length > 0;
  const single = plan === undefined && planError === undefined && !planning;
  await sink.emit(
    runStartedEvent({ story: args.story, runId, workflow: args.workflow, maxAttempts, readmission: args.readmission ?? false, ...(single ? { taskId } : {}), unsandboxed: !sandbox.settings.enabled, network: networkOf(sandbox.netPolicyOf(true)) }),
  );

  let testCommand: string | undefined;
  try {
    if (planError) throw planError;
    // Preflight: a configuration mistake blocks before anything is provisioned or launched.
    const problems = await preflight({
      config: args.config,
      source: args.configSource ?? "configuration",
      workflow: args.workflow,
      operatorAllow: args.agentEnvAllow,
      base: { repoDir: args.repoDir, ref: args.baseRef },
    });
    if (problems.length > 0) throw new PreflightError(problems);
    testCommand = args.config.test.command;
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof PlanError)) throw error;
    await sink.emit({ kind: "story.blocked", ...(single ? { taskId } : {}), failureClass: "config-invalid", detail: error.message });
    return { ...outcomeBase, status: "blocked", failureClass: "config-invalid", detail: error.message };
  }
  // Names the agents receive: the operator's allowlist ∩ the repository's `agent.env`. Preflight
  // has refused every other name already; the intersection stays so that it never rests on that alone.
  const allowed = new Set(args.agentEnvAllow);
  // Stryker disable next-line ConditionalExpression,MethodExpression: preflight refuses a name outside the allowlist before this line
  const agentEnv = args.config.agent.env.filter((name) => allowed.has(name));
  if (plan || planning) {
    return runPlannedStory({ args, runId, deps, layout, sink, clock, maxAttempts, testCommand, agentEnv, sandbox }, plan);
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
    task = {
      taskId,
      story: args.story,
      config: args.config,
      workflow: args.workflow,
      maxAttempts,
      layout,
      worktree,
      deps,
      sink,
      harnessHome: args.harnessHome,
      agentEnv,
      clock,
      sandbox,
      seatsLaunched: 0,
      ...(args.signal ? { signal: args.signal } : {}),
    };
    await sink.emit({ kind: "worktree.created", taskId, worktree: worktree.path, branch: worktree.branch, base: worktree.base });
    await ensureProvisioned(task, "worktree");
    // The baseline: the suite once on the base commit, before any agent.
    if (needsBaseline(args.workflow.stages, testCommand)) {
      const environment = await runBaseline(task, testCommand);
      if (environment) return await block(environment.failureClass, environment.reason);
    }
    return await runSingleTask(task, args, testCommand, block);
  } catch (error) {
    // A stop request ends provisioning as well: the story is interrupted, not blocked on infrastructure.
    if (args.signal?.aborted) return block("interrupted", "the run was stopped");
    if (error instanceof WorkspaceProvisionError) {
      await sink.emit({ kind: "provision.failed", taskId, cmd: error.cmd, exitCode: error.exitCode, logTail: error.logTail });
      const how = error.exitCode === null ? "did not finish" : `exited ${error.exitCode}`;
      // The detail reaches commit messages and GitHub: the log is named relative to the run
      // directory, never by a path of the App's machine.
      return block("workspace-provision-failed", `provisioning \`${error.cmd ?? "(none)"}\` ${how}; log: ${relative(layout.root, error.logPath)} in the run directory`);
    }
    // Stryker disable next-line ConditionalExpression: everything the pipeline throws is an Error
    return block(failureClassOf(error), error instanceof Error ? error.message : String(error));
  }
}

type Block = (failureClass: FailureClass, detail: string) => Promise<StoryOutcome>;

/** A story without a plan: its one task's attempts, then its commit on the story branch. */
async function runSingleTask(task: TaskRun, args: RunStoryArgs, testCommand: string | undefined, block: Block): Promise<StoryOutcome> {
  const result = await runAttempts(task, { stages: task.workflow.stages, retryStage: task.workflow.retryStage, testCommand });
  if (!result.passed) return block(result.failureClass, result.reason);
  const commit = await commitWorktree(task.worktree.path, storyCommitMessage(task.story), { stage: true });
  await task.sink.emit({ kind: "story.completed", taskId: task.taskId, branch: task.worktree.branch, commit });
  try {
    await task.deps.removeTaskWorktree(args.repoDir, task.worktree.path);
  } catch (error) {
    appendFileSync(join(task.layout.logs, "coordinator.log"), `worktree removal failed: ${String(error)}\n`);
  }
  return { status: "completed", branch: task.worktree.branch, commit, runDir: task.layout.root, worktree: task.worktree.path };
}

/** The network policy of networked steps, as run.started records it. */
function networkOf(policy: string): "own" | "egress" | "host" {
  return policy === "egress" || policy === "host" ? policy : "own";
}
