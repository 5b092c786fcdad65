/**
 * Where a worker's time between two stories goes, from the trace its preloaded tracer wrote
 * (bench/lib/trace-preload.mjs): child processes, HTTP requests, Redis commands and the
 * process's own CPU, matched to the gaps between the story journals (bench/lib/story-timeline.ts).
 * A gap is split at BullMQ's hand-off (its `moveToFinished` script, which also fetches the next
 * job): the *tail* is the finished story's work after its journal ended (worktree removal, the
 * push, the final reports), the *hand-off* the script itself, the *head* the next story's work
 * before its journal starts (tokens, admission, lookups, fetch, start push, config).
 */
import { existsSync, readFileSync } from "node:fs";
import type { StoryTimeline } from "./story-timeline.js";

export interface TraceRecord {
  k: "proc" | "http" | "redis" | "cpu";
  w: string;
  /** ms since the epoch. */
  s: number;
  e: number;
  /** CPU ms in [s, e] (`cpu` records). */
  cpu?: number;
}

export function readTrace(path: string): TraceRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as TraceRecord);
}

/** A stable name for a traced operation: HTTP paths without owners, numbers and hashes. */
export function opLabel(record: TraceRecord): string {
  if (record.k !== "http") return record.w;
  return record.w
    .replace(/\/repos\/[^/]+\/[^/]+/, "/repos/:o/:r")
    .replace(/\/[0-9a-f]{40}\b/g, "/:sha")
    .replace(/\/\d+\b/g, "/:n")
    .replace(/\/(collaborators)\/[^/]+/, "/$1/:user")
    .replace(/\/contents\/.*/, "/contents/:path")
    .replace(/\/git\/ref\/.*/, "/git/ref/:ref");
}

type Phase = "tail" | "hand-off" | "head";
const PHASES: Phase[] = ["tail", "hand-off", "head"];

interface OpTotal {
  count: number;
  ms: number;
  /** Sum of start offsets from the phase's start (for the order in which they happen). */
  offset: number;
}

export interface GapBreakdown {
  gaps: number;
  /** Mean ms per gap. */
  mean: Record<Phase, number> & { gap: number; cpu: number; uncovered: number };
  /** Per phase, label → totals over all gaps. */
  ops: Record<Phase, Map<string, OpTotal>>;
}

/** Length of the union of `intervals`, clipped to [from, to]. */
function covered(intervals: Array<[number, number]>, from: number, to: number): number {
  const clipped = intervals
    .map(([s, e]) => [Math.max(s, from), Math.min(e, to)] as [number, number])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = from;
  for (const [s, e] of clipped) {
    if (e <= end) continue;
    total += e - Math.max(s, end);
    end = e;
  }
  return total;
}

/** Breaks down the gaps between consecutive stories of one worker with its trace. */
export function breakDownGaps(timelines: StoryTimeline[], trace: TraceRecord[]): GapBreakdown {
  const ops: GapBreakdown["ops"] = { tail: new Map(), "hand-off": new Map(), head: new Map() };
  const sums = { tail: 0, "hand-off": 0, head: 0, gap: 0, cpu: 0, uncovered: 0 };
  let gaps = 0;
  const work = trace.filter((record) => record.k !== "cpu");
  const cpu = trace.filter((record) => record.k === "cpu");
  for (let index = 1; index < timelines.length; index += 1) {
    const from = (timelines[index - 1] as StoryTimeline).end;
    const to = (timelines[index] as StoryTimeline).start;
    if (to <= from) continue;
    gaps += 1;
    const finished = work.find((record) => record.k === "redis" && record.w === "script moveToFinished" && record.s >= from && record.s < to);
    const split: Record<Phase, [number, number]> = finished
      ? { tail: [from, finished.s], "hand-off": [finished.s, Math.min(finished.e, to)], head: [Math.min(finished.e, to), to] }
      : { tail: [from, to], "hand-off": [to, to], head: [to, to] };
    for (const phase of PHASES) sums[phase] += split[phase][1] - split[phase][0];
    sums.gap += to - from;
    const inGap = work.filter((record) => record.s >= from && record.s < to);
    // Blocking reads of an idle BullMQ connection are waiting, not work.
    sums.uncovered +=
      to -
      from -
      covered(
        inGap.filter((record) => !/^bzpopmin|^brpoplpush|^bzpopmax/i.test(record.w)).map((record) => [record.s, record.e]),
        from,
        to,
      );
    for (const sample of cpu) {
      const overlap = Math.min(sample.e, to) - Math.max(sample.s, from);
      if (overlap > 0 && sample.e > sample.s) sums.cpu += ((sample.cpu ?? 0) * overlap) / (sample.e - sample.s);
    }
    for (const record of inGap) {
      const phase = PHASES.find((each) => record.s >= split[each][0] && record.s < split[each][1]) ?? "head";
      const label = opLabel(record);
      const total = ops[phase].get(label) ?? { count: 0, ms: 0, offset: 0 };
      total.count += 1;
      total.ms += Math.min(record.e, to) - record.s;
      total.offset += record.s - split[phase][0];
      ops[phase].set(label, total);
    }
  }
  const n = Math.max(1, gaps);
  return {
    gaps,
    mean: { tail: sums.tail / n, "hand-off": sums["hand-off"] / n, head: sums.head / n, gap: sums.gap / n, cpu: sums.cpu / n, uncovered: sums.uncovered / n },
    ops,
  };
}

/** Merges several workers' breakdowns (weighted by their gaps). */
export function mergeBreakdowns(parts: GapBreakdown[]): GapBreakdown {
  const gaps = parts.reduce((sum, part) => sum + part.gaps, 0);
  const n = Math.max(1, gaps);
  const mean = { tail: 0, "hand-off": 0, head: 0, gap: 0, cpu: 0, uncovered: 0 };
  const ops: GapBreakdown["ops"] = { tail: new Map(), "hand-off": new Map(), head: new Map() };
  for (const part of parts) {
    for (const key of Object.keys(mean) as Array<keyof typeof mean>) mean[key] += (part.mean[key] * part.gaps) / n;
    for (const phase of PHASES) {
      for (const [label, total] of part.ops[phase]) {
        const into = ops[phase].get(label) ?? { count: 0, ms: 0, offset: 0 };
        ops[phase].set(label, { count: into.count + total.count, ms: into.ms + total.ms, offset: into.offset + total.offset });
      }
    }
  }
  return { gaps, mean, ops };
}

/** Lines for the bench's output: each phase's mean, then its operations in the order they start (per gap: count, ms). */
export function formatBreakdown(breakdown: GapBreakdown, minMs = 5): string[] {
  const n = Math.max(1, breakdown.gaps);
  const { mean } = breakdown;
  const lines = [
    `gap ${(mean.gap / 1000).toFixed(2)} s = tail ${(mean.tail / 1000).toFixed(2)} + hand-off ${(mean["hand-off"] / 1000).toFixed(2)} + head ${(mean.head / 1000).toFixed(2)}; worker CPU in it ${(mean.cpu / 1000).toFixed(2)} s; covered by no process, request or command ${(mean.uncovered / 1000).toFixed(2)} s (${breakdown.gaps} gaps)`,
  ];
  for (const phase of PHASES) {
    const rows = [...breakdown.ops[phase]]
      .filter(([, total]) => total.ms / n >= minMs)
      .sort((a, b) => a[1].offset / a[1].count - b[1].offset / b[1].count)
      .map(([label, total]) => `${label} ${(total.count / n).toFixed(1)}× ${(total.ms / n).toFixed(0)} ms`);
    if (rows.length > 0) lines.push(`${phase}: ${rows.join(", ")}`);
  }
  return lines;
}

/** Per journal step (`worktree`, `clean_clone`, …): the operations that started in it, label → totals over all stories. */
export function breakDownSteps(
  timelines: StoryTimeline[],
  trace: TraceRecord[],
  steps: readonly string[],
): Map<string, { stories: number; ops: Map<string, OpTotal> }> {
  const work = trace.filter((record) => record.k !== "cpu");
  const found = new Map<string, { stories: number; ops: Map<string, OpTotal> }>();
  for (const step of steps) found.set(step, { stories: timelines.length, ops: new Map() });
  for (const timeline of timelines) {
    for (const [step, from, to] of timeline.spans) {
      const into = found.get(step);
      if (!into) continue;
      for (const record of work) {
        if (record.s < from || record.s >= to) continue;
        const label = opLabel(record);
        const total = into.ops.get(label) ?? { count: 0, ms: 0, offset: 0 };
        total.count += 1;
        total.ms += Math.min(record.e, to) - record.s;
        total.offset += record.s - from;
        into.ops.set(label, total);
      }
    }
  }
  return found;
}

/** One line per step: its operations in the order they start (per story: count, ms). */
export function formatSteps(found: Map<string, { stories: number; ops: Map<string, OpTotal> }>, minMs = 5): string[] {
  const lines: string[] = [];
  for (const [step, { stories, ops }] of found) {
    const n = Math.max(1, stories);
    const rows = [...ops]
      .filter(([, total]) => total.ms / n >= minMs)
      .sort((a, b) => a[1].offset / a[1].count - b[1].offset / b[1].count)
      .map(([label, total]) => `${label} ${(total.count / n).toFixed(1)}× ${(total.ms / n).toFixed(0)} ms`);
    if (rows.length > 0) lines.push(`in ${step}: ${rows.join(", ")}`);
  }
  return lines;
}

/** Child processes the workers started (their traces), per story by kind (`git fetch`, `sh -c`, …), most first. */
export function processesPerStory(traces: TraceRecord[][], stories: number): { total: number; kinds: Array<[string, number]> } {
  const kinds = new Map<string, number>();
  for (const record of traces.flat()) if (record.k === "proc") kinds.set(record.w, (kinds.get(record.w) ?? 0) + 1);
  const n = Math.max(1, stories);
  const total = [...kinds.values()].reduce((sum, count) => sum + count, 0) / n;
  return { total, kinds: [...kinds].map(([kind, count]) => [kind, count / n] as [string, number]).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])) };
}
