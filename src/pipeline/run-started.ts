/** The one builder of a run's first event, for the coordinator and for a runner that stops a story before the pipeline could. */
import type { HistoryEvent } from "./events.js";
import { declaredChecks } from "./workflow.js";
import { type Workflow } from "./workflow-types.js";

export type RunStartedEvent = Extract<HistoryEvent, { kind: "run.started" }>;

export interface RunStartedArgs {
  story: { id: string; title: string };
  runId: string;
  workflow: Workflow;
  /** The attempt ceiling in force (the configuration's when it sets one); the workflow's when absent. */
  maxAttempts?: number;
  readmission: boolean;
  /** The task of a story that runs as one task. */
  taskId?: string;
  /** True when the story runs with the sandbox turned off. */
  unsandboxed?: boolean;
  /** How networked steps reach the network, when the story runs sandboxed. */
  network?: "own" | "egress" | "host";
}

/** `run.started` without its time (the journal's sink stamps it), listing the workflow's stages and checks. */
export function runStartedEvent(args: RunStartedArgs): Omit<RunStartedEvent, "at"> {
  return {
    kind: "run.started",
    storyId: args.story.id,
    runId: args.runId,
    ...(args.taskId !== undefined ? { taskId: args.taskId } : {}),
    title: args.story.title,
    stages: args.workflow.stages.map((stage) => stage.id),
    checks: declaredChecks(args.workflow),
    maxAttempts: args.maxAttempts ?? args.workflow.maxAttempts,
    readmission: args.readmission,
    ...(args.unsandboxed ? { unsandboxed: true as const } : {}),
    ...(args.network !== undefined && !args.unsandboxed ? { network: args.network } : {}),
  };
}
