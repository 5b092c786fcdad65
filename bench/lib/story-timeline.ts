/**
 * Where a story's time went, from the journals its workers wrote (`<home>/runs/<story>/<run>/
 * execution-history.ndjson`): each gap between two events is charged to the later one's step
 * (`stage <id>`, `gate <stage>`, `provision`, …), and a worker's idle time between its stories
 * is the time it did not spend in one. For the scale-out benchmark, to tell contention (steps
 * that grow with more workers) from the harness's own waits (gaps, pickup).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_FILE, readJournal } from "../../src/pipeline/index.js";

export interface StoryTimeline {
  /** ms since the epoch. */
  start: number;
  end: number;
  /** Step → ms. */
  steps: Map<string, number>;
  /** Each step's span: [step, from, to] in ms since the epoch, in the journal's order. */
  spans: Array<[string, number, number]>;
}

function stepOf(event: { kind: string; stage?: string }): string {
  if (event.kind === "stage.finished" || event.kind === "stage.started")
    return `stage ${event.stage ?? "?"}${event.kind === "stage.started" ? " (before)" : ""}`;
  if (event.kind === "gate.finished") return `gate ${event.stage ?? "?"}`;
  return event.kind.replace(/\.(succeeded|created|finished|completed|recorded)$/, "");
}

/** Every story run found under `home`. */
export function storyTimelines(home: string): StoryTimeline[] {
  const runs = join(home, "runs");
  if (!existsSync(runs)) return [];
  const found: StoryTimeline[] = [];
  for (const story of readdirSync(runs)) {
    for (const run of readdirSync(join(runs, story))) {
      const path = join(runs, story, run, JOURNAL_FILE);
      if (!existsSync(path)) continue;
      const events = readJournal(path) as Array<{ kind: string; at: string; stage?: string }>;
      const first = events[0];
      const last = events.at(-1);
      if (!first || !last) continue;
      const steps = new Map<string, number>();
      const spans: Array<[string, number, number]> = [];
      for (let index = 1; index < events.length; index += 1) {
        const event = events[index] as { kind: string; at: string; stage?: string };
        const from = Date.parse((events[index - 1] as { at: string }).at);
        const gap = Date.parse(event.at) - from;
        steps.set(stepOf(event), (steps.get(stepOf(event)) ?? 0) + gap);
        spans.push([stepOf(event), from, Date.parse(event.at)]);
      }
      found.push({ start: Date.parse(first.at), end: Date.parse(last.at), steps, spans });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Mean ms of each step over `timelines`, and the mean story (first to last event). */
export function meanSteps(timelines: StoryTimeline[]): { story: number; steps: Array<[string, number]> } {
  const totals = new Map<string, number>();
  for (const timeline of timelines) for (const [step, ms] of timeline.steps) totals.set(step, (totals.get(step) ?? 0) + ms);
  const n = Math.max(1, timelines.length);
  const story = timelines.reduce((sum, timeline) => sum + timeline.end - timeline.start, 0) / n;
  return { story, steps: [...totals].map(([step, ms]) => [step, ms / n] as [string, number]).sort((a, b) => b[1] - a[1]) };
}

/** Per worker: ms between the end of one story's journal and the start of its next (not in a journal: pickup, repository fetch, worktree, reporting). */
export function idleBetween(timelines: StoryTimeline[]): number[] {
  const gaps: number[] = [];
  for (let index = 1; index < timelines.length; index += 1) gaps.push((timelines[index] as StoryTimeline).start - (timelines[index - 1] as StoryTimeline).end);
  return gaps;
}
