/** What a run of a story fixes for all its tasks: its arguments, collaborators, layout and limits. */
import type { PipelineDeps } from "./deps.js";
import type { RunLayout } from "./run-dir.js";
import type { EventSink } from "./sink.js";
import type { TaskSlots } from "./task-slots.js";
import type { RunStoryArgs } from "./types.js";
import type { Stage } from "./workflow-types.js";
import type { Sandbox } from "../sandbox/index.js";

/** What every task of one run of a planned story shares. */
export interface StoryRun {
  args: RunStoryArgs;
  runId: string;
  deps: PipelineDeps;
  layout: RunLayout;
  sink: EventSink;
  clock: () => Date;
  maxAttempts: number;
  agentEnv: string[];
  /** Where repository code runs. */
  sandbox: Sandbox;
  /** Tasks run side by side at most this many at once. */
  concurrency: number;
  /** The runner's slots beyond the story's own: a wave's further tasks at once each take a free one. */
  slots: TaskSlots;
  /** The workflow's per-task stages and where their failed attempts go back to. */
  taskStages: Stage[];
  taskRetryStage: string;
  /** The workflow's story-level stages, run once on the merged branch. */
  storyStages: Stage[];
  /** The record folder of one task (`tasks/<id>/attempts/<n>/<stage>`). */
  taskLayout(taskId: string): RunLayout;
}
