/** What a run of a story fixes for all its tasks: its arguments, context, layout, limits and stages. */
import type { RunLayout } from "./run-dir.js";
import type { RunContext } from "./task.js";
import type { TaskSlots } from "./task-slots.js";
import type { RunStoryArgs } from "./types.js";
import type { Stage } from "./workflow-types.js";

/** What every task of one run of a story shares (a story without a plan: its one task). */
export interface StoryRun {
  readonly args: RunStoryArgs;
  readonly runId: string;
  /** What each task's context starts from: the story, configuration, collaborators, sandbox, clock and sink. */
  readonly context: RunContext;
  /** The run directory. */
  readonly layout: RunLayout;
  /** Tasks run side by side at most this many at once. */
  readonly concurrency: number;
  /** The runner's slots beyond the story's own: a wave's further tasks at once each take a free one. */
  readonly slots: TaskSlots;
  /** The workflow's per-task stages and where their failed attempts go back to. */
  readonly taskStages: Stage[];
  readonly taskRetryStage: string;
  /** The workflow's story-level stages, run once on the merged branch (none for a story without a plan). */
  readonly storyStages: Stage[];
  /** The record folder of one task (`tasks/<id>/attempts/<n>/<stage>`; the run directory itself for a story without a plan). */
  taskLayout(taskId: string): RunLayout;
}
