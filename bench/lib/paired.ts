/**
 * Paired measurement for benchmarks that claim a ratio: subject and baseline run interleaved
 * (A B B A A B …) so drift on a shared machine hits both sides alike, each pair gives one
 * ratio, and the figure is the median of those ratios with their range. When the baseline
 * itself moved more than the effect being claimed, the result says "inconclusive" instead
 * of a number someone might quote.
 *
 * How far the baseline "moved" is the median step between neighbouring repetitions, over its
 * median, times √2: the movement that pairing cannot cancel. (For steady noise the median step
 * is 1/√2 of the interquartile range, so without drift the two measures agree.) A slow drift (load rising through a run)
 * moves both sides of every pair alike and leaves the ratios where they were, yet widens the
 * spread of the whole run, so a spread over the run (the interquartile range, this file's earlier measure)
 * made a run inconclusive whenever the load climbed. The full range was worse still: it only
 * widens as repetitions are added, one stray sample sufficing.
 */
import { loadavg } from "node:os";

/** One side of a comparison: returns the measured milliseconds of one repetition. */
export type Measure = (rep: number) => Promise<number>;

export interface PairedResult {
  reps: number;
  subjectMs: number[];
  baselineMs: number[];
  /** subject ÷ baseline per pair, in repetition order. */
  ratios: number[];
  medianRatio: number;
  minRatio: number;
  maxRatio: number;
  medianSubjectMs: number;
  medianBaselineMs: number;
  /** How far the baseline moved: √2 × the median of |b[i+1] − b[i]| ÷ its median (see the file's comment); 0 for one sample. */
  baselineSpread: number;
  /** True when the baseline moved more than the effect (|median ratio − 1|). */
  inconclusive: boolean;
  /** 1-minute load average before and after the measurement. */
  load: { before: number; after: number };
}

/** The median of `samples` (the mean of the middle two for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The `q` quantile of `samples` (0 ≤ q ≤ 1), interpolated between the two nearest ranks. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const lower = sorted[below] as number;
  const upper = sorted[Math.min(below + 1, sorted.length - 1)] as number;
  return lower + (upper - lower) * (position - below);
}

/** True when repetition `rep` runs the subject first: the ABBA pattern (A B, B A, A B, …). */
export function subjectFirst(rep: number): boolean {
  return rep % 2 === 0;
}

/** Summarises paired samples; pure, so the verdict logic is testable without timing. */
export function summarisePairs(subjectMs: readonly number[], baselineMs: readonly number[], load: { before: number; after: number }): PairedResult {
  if (subjectMs.length !== baselineMs.length || subjectMs.length === 0) throw new Error("paired samples must be non-empty and of equal length");
  const ratios = subjectMs.map((value, index) => value / (baselineMs[index] as number));
  const medianRatio = median(ratios);
  const medianBaselineMs = median(baselineMs);
  const steps = baselineMs.slice(1).map((value, index) => Math.abs(value - (baselineMs[index] as number)));
  const baselineSpread = steps.length === 0 ? 0 : (Math.SQRT2 * median(steps)) / medianBaselineMs;
  return {
    reps: ratios.length,
    subjectMs: [...subjectMs],
    baselineMs: [...baselineMs],
    ratios,
    medianRatio,
    minRatio: Math.min(...ratios),
    maxRatio: Math.max(...ratios),
    medianSubjectMs: median(subjectMs),
    medianBaselineMs,
    baselineSpread,
    inconclusive: baselineSpread > Math.abs(medianRatio - 1),
    load,
  };
}

/** Runs `subject` and `baseline` `reps` times each, interleaved, after one warm-up of each. */
export async function measurePaired(subject: Measure, baseline: Measure, reps: number, options: { warmup?: boolean } = {}): Promise<PairedResult> {
  if (!Number.isInteger(reps) || reps < 1) throw new Error(`reps must be a positive integer, got ${String(reps)}`);
  if (options.warmup !== false) {
    await baseline(-1);
    await subject(-1);
  }
  const before = loadavg()[0] ?? 0;
  const subjectMs: number[] = [];
  const baselineMs: number[] = [];
  for (let rep = 0; rep < reps; rep += 1) {
    if (subjectFirst(rep)) {
      subjectMs.push(await subject(rep));
      baselineMs.push(await baseline(rep));
    } else {
      baselineMs.push(await baseline(rep));
      subjectMs.push(await subject(rep));
    }
  }
  return summarisePairs(subjectMs, baselineMs, { before, after: loadavg()[0] ?? 0 });
}

/** The median of the per-pair differences, subject − baseline, in ms (for targets stated as "at most N ms more"). */
export function medianDifference(result: PairedResult): number {
  return median(result.subjectMs.map((value, index) => value - (result.baselineMs[index] as number)));
}

/** One line for a report: `label: 1.12× (1.05–1.31), n=7, subject 120 ms vs 107 ms, load 1.9→2.1` (`unit` when the samples are not milliseconds). */
export function formatPaired(label: string, result: PairedResult, target?: { max: number }, unit = "ms"): string {
  const verdict = result.inconclusive
    ? `INCONCLUSIVE (baseline moved ${(result.baselineSpread * 100).toFixed(0)} %, more than the effect)`
    : target
      ? result.medianRatio <= target.max
        ? `target ≤ ${target.max} MET`
        : `target ≤ ${target.max} NOT MET`
      : "";
  return (
    `${label}: ${result.medianRatio.toFixed(2)}× (${result.minRatio.toFixed(2)}–${result.maxRatio.toFixed(2)}), n=${result.reps}, ` +
    `subject ${result.medianSubjectMs.toFixed(1)} ${unit} vs baseline ${result.medianBaselineMs.toFixed(1)} ${unit}, ` +
    `load ${result.load.before.toFixed(1)}→${result.load.after.toFixed(1)}${verdict ? `  ${verdict}` : ""}`
  );
}
