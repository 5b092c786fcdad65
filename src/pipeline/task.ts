import type { RevisionPrompt } from "./context.js";
import { join } from "node:path";
import type { AgentLaunch } from "../agents/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { TaskWorktree } from "../workspace/index.js";
import type { HarnessConfig } from "./config.js";
import type { BaselineResult, PendingBaseline } from "./check-results.js";
import type { SuiteEvidence } from "./context.js";
import type { SeatBinding } from "./seat-binding.js";
import type { BudgetMeter } from "./budget.js";
import type { PipelineDeps } from "./deps.js";
import type { Plan } from "./plan.js";
import { AgentBoots } from "./agent-boots.js";
import type { RunLayout } from "./run-dir.js";
import type { EventSink } from "./sink.js";
import type { StoryInput } from "./types.js";
import type { Workflow } from "./workflow-types.js";

/**
 * What a run of a story fixes for every task it runs: the story, its configuration and
 * workflow, the collaborators, where repository code runs, the clock, the journal's sink and
 * the stop signal. Built once per run (the coordinator); no stage changes it.
 */
export interface RunContext {
  readonly story: StoryInput;
  /** A revision round: its feedback, and the template its implementer stage uses instead of the workflow's. */
  readonly revision?: { prompt: RevisionPrompt; template: string; stageId: string };
  readonly config: HarnessConfig;
  readonly workflow: Workflow;
  readonly maxAttempts: number;
  readonly deps: PipelineDeps;
  readonly sink: EventSink;
  readonly harnessHome: string;
  /** Names the agents receive: the operator's allowlist ∩ the repository's `agent.env`. */
  readonly agentEnv: string[];
  readonly clock: () => Date;
  readonly signal?: AbortSignal;
  /** Where provisioning, agents and suites run. */
  readonly sandbox: Sandbox;
  /** The writer who accepted this run's test-integrity findings, when one did. */
  readonly acceptIntegrity?: string;
  /** The ref whose merge base with a task's base the integrity gate compares against. */
  readonly integrityBase?: string;
  /** Removes the App's secrets from what is kept of agents. */
  readonly redact: (text: string) => string;
  /** The story's agent budget and what its seats spent, shared by every task. */
  readonly budget: BudgetMeter;
}

/** Which task of a run it is: its id, its record folder and what its prompts say of it. */
export interface TaskPlace {
  /** The task's id in events (`task-<run>` for a story without a plan, the plan's id otherwise). */
  readonly taskId: string;
  readonly layout: RunLayout;
  /** What the prompts say about the task when the story has a plan. */
  readonly planContext?: TaskPromptContext;
}

/** What a task's stages change as they run: its worktree, the evidence measured so far and what its seats did. */
export interface TaskState {
  worktree: TaskWorktree;
  /** The suite on the base commit, run beside the first seat (absent when no stage runs the suite, or until it ends). */
  baseline?: BaselineResult;
  /** The baseline while it runs: settled before the task's second stage. */
  pendingBaseline?: PendingBaseline;
  /** The most recent suite gate result, shown to later prompts. */
  lastSuite?: SuiteEvidence;
  /** How many agents were launched; a blocked story with none has no agent work to commit. */
  seatsLaunched: number;
  /** The task's agents that are starting: the baseline's steps wait for them. */
  readonly agentBoots: AgentBoots;
  /** The plan a planner stage of this task wrote and the harness accepted. */
  producedPlan?: Plan;
}

/** Everything one task of a story needs while its stages run: the run's fixed context, the task's place and its state. */
export interface TaskRun extends RunContext, TaskPlace, TaskState {}

/** A task of a run at `place`, working in `worktree`, its state otherwise fresh. */
export function taskRunOf(context: RunContext, place: TaskPlace, worktree: TaskWorktree): TaskRun {
  return { ...context, ...place, worktree, seatsLaunched: 0, agentBoots: new AgentBoots(context.deps.bootClock) };
}

/** A plan task as its prompts show it. */
export interface TaskPromptContext {
  id: string;
  title: string;
  description: string;
  files: readonly string[];
  /** What the earlier waves did, one line per task. */
  earlier: string;
}

/** Where a task's provisioning output goes (every phase appends to it). */
export function provisionLogPath(task: Pick<TaskRun, "layout" | "taskId">): string {
  return join(task.layout.logs, `provision-${task.taskId}.log`);
}

/**
 * Makes sure the worktree is provisioned before a seat or gate enters: when the receipt is
 * missing it provisions again (journaled), then asserts the receipt. A terminal failure
 * throws the workspace's WorkspaceProvisionError for the coordinator to block on.
 */
export async function ensureProvisioned(task: TaskRun, phase: string): Promise<void> {
  const worktree = task.worktree.path;
  if (!task.deps.isProvisioned(worktree)) {
    const provisioned = await task.deps.provisionWorktree({
      worktree,
      config: provisionConfig(task.config),
      taskId: task.taskId,
      logPath: provisionLogPath(task),
      harnessHome: task.harnessHome,
      now: task.clock,
      sandbox: task.sandbox,
    });
    await task.sink.emit({
      kind: "provision.succeeded",
      taskId: task.taskId,
      cmd: provisioned.receipt.cmd,
      durationMs: provisioned.receipt.durationMs,
      skipped: provisioned.skipped,
      phase,
    });
  }
  task.deps.assertProvisioned(worktree, phase);
}

/** The repository's provisioning settings in the workspace's terms. */
export function provisionConfig(config: HarnessConfig): { command?: string; timeoutMs?: number } {
  return {
    ...(config.provision.command !== undefined ? { command: config.provision.command } : {}),
    ...(config.provision.timeoutMs !== undefined ? { timeoutMs: config.provision.timeoutMs } : {}),
  };
}

/** Who sits in a seat: the seat's override, else the repository's agent, then its fallbacks; null when disabled. */
export function seatLaunch(config: HarnessConfig, seat: string): SeatBinding | null {
  const override = config.seats[seat];
  if (override && !override.enabled) return null;
  const own = override && (override.command !== undefined || override.preset !== undefined);
  const source = own ? override : config.agent;
  const launch: AgentLaunch = source.command !== undefined ? { command: source.command } : source.preset !== undefined ? { preset: source.preset } : {};
  const fallback = (override?.fallback ?? config.agent.fallback ?? []).filter((preset) => preset !== launch.preset).map((preset): AgentLaunch => ({ preset }));
  return { launch, fallback, timeoutMs: override?.timeoutMs ?? config.agent.timeoutMs };
}
