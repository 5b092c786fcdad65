import { join } from "node:path";
import type { AgentLaunch } from "../agents/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { TaskWorktree } from "../workspace/index.js";
import type { HarnessConfig } from "./config.js";
import type { BaselineResult } from "./check-results.js";
import type { SuiteEvidence } from "./context.js";
import type { SeatBinding } from "./seat-binding.js";
import type { PipelineDeps } from "./deps.js";
import type { Plan } from "./plan.js";
import type { RunLayout } from "./run-dir.js";
import type { EventSink } from "./sink.js";
import type { StoryInput } from "./types.js";
import type { Workflow } from "./workflow-types.js";

/** Everything one task of a story needs while its stages run. */
export interface TaskRun {
  /** The task's id in events (`task-<run>` for a story without a plan, the plan's id otherwise). */
  taskId: string;
  story: StoryInput;
  config: HarnessConfig;
  workflow: Workflow;
  maxAttempts: number;
  layout: RunLayout;
  worktree: TaskWorktree;
  deps: PipelineDeps;
  sink: EventSink;
  harnessHome: string;
  /** Names the agents receive: the operator's allowlist ∩ the repository's `agent.env`. */
  agentEnv: string[];
  clock: () => Date;
  signal?: AbortSignal;
  /** Where provisioning, agents and suites run. */
  sandbox: Sandbox;
  /** The suite on the base commit, run once before any agent (absent when no stage runs the suite). */
  baseline?: BaselineResult;
  /** The most recent suite gate result, shown to later prompts. */
  lastSuite?: SuiteEvidence;
  /** How many agents were launched; a blocked story with none has no agent work to commit. */
  seatsLaunched: number;
  /** What the prompts say about the task when the story has a plan. */
  planContext?: TaskPromptContext;
  /** The plan a planner stage of this task wrote and the harness accepted. */
  producedPlan?: Plan;
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
