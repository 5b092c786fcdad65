/** The verdict logic of paired benchmarks (pure: no timing is measured here). */
import { formatPaired, measurePaired, median, medianDifference, quantile, subjectFirst, summarisePairs } from "../../bench/lib/paired.js";

const load = { before: 1, after: 1 };

describe("paired benchmark summaries", () => {
  it("takes the median of per-pair ratios, with their range", () => {
    const result = summarisePairs([110, 120, 300], [100, 100, 100], load);
    expect(result.ratios).toEqual([1.1, 1.2, 3]);
    expect(result.medianRatio).toBe(1.2);
    expect([result.minRatio, result.maxRatio]).toEqual([1.1, 3]);
    expect(result.inconclusive).toBe(false);
  });

  it("is inconclusive when the baseline moved more than the effect", () => {
    const result = summarisePairs([105, 210, 106, 212], [100, 200, 100, 200], load);
    expect(result.medianRatio).toBeCloseTo(1.055);
    // Every step between neighbouring repetitions is 100, around a median of 150.
    expect(result.baselineSpread).toBeCloseTo((Math.SQRT2 * 100) / 150);
    expect(result.inconclusive).toBe(true);
    expect(formatPaired("x", result, { max: 1.3 })).toContain("INCONCLUSIVE");
  });

  it("measures the baseline's movement by its median step, so one stray sample does not void a run", () => {
    const steady = [100, 101, 99, 100, 102, 98, 100, 400, 100];
    const result = summarisePairs(
      steady.map((value) => value * 0.8),
      steady,
      load,
    );
    // Steps 1 2 1 2 4 2 300 300, sorted 1 1 2 [2 2] 4 300 300: a median step of 2 on a median of 100.
    expect(result.baselineSpread).toBeCloseTo((Math.SQRT2 * 2) / 100);
    expect(result.inconclusive).toBe(false);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([5], 0.75)).toBe(5);
  });

  it("does not count a drift that moves both sides of every pair alike", () => {
    // Without drift it is no more lenient than the interquartile range: a baseline jumping 90 ↔ 110
    // moves 28 % by this measure (20 % by its interquartile range), more than a 20 % effect.
    const noisy = summarisePairs([80, 80, 80, 80], [90, 110, 90, 110], load);
    expect(noisy.baselineSpread).toBeCloseTo((Math.SQRT2 * 20) / 100);
    expect(noisy.inconclusive).toBe(true);
    // Load climbing through the run: the baseline doubles from 100 to 240, the subject stays 0.7× of it.
    const drifting = [100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200, 210, 220, 230, 240];
    const result = summarisePairs(
      drifting.map((value) => value * 0.7),
      drifting,
      load,
    );
    expect(result.medianRatio).toBeCloseTo(0.7);
    // The interquartile range would be 70 on a median of 170 (41 %, more than the 30 % effect); each step is 10.
    expect(quantile(drifting, 0.75) - quantile(drifting, 0.25)).toBeCloseTo(70);
    expect(result.baselineSpread).toBeCloseTo((Math.SQRT2 * 10) / 170);
    expect(result.inconclusive).toBe(false);
    expect(summarisePairs([70], [100], load).baselineSpread).toBe(0);
  });

  it("says whether a target was met", () => {
    const met = summarisePairs([50, 52], [100, 101], load);
    expect(formatPaired("fast", met, { max: 1 })).toContain("target ≤ 1 MET");
    const missed = summarisePairs([200, 202], [100, 101], load);
    expect(formatPaired("slow", missed, { max: 1.3 })).toContain("NOT MET");
  });

  it("gives the median of per-pair differences, and names the unit of the samples", () => {
    const result = summarisePairs([130, 150, 500], [100, 110, 120], load);
    expect(medianDifference(result)).toBe(40);
    expect(formatPaired("memory", result, undefined, "MiB")).toContain("subject 150.0 MiB vs baseline 110.0 MiB");
    expect(formatPaired("time", result)).toContain("subject 150.0 ms vs baseline 110.0 ms");
  });

  it("refuses unpaired samples", () => {
    expect(() => summarisePairs([1, 2], [1], load)).toThrow("equal length");
    expect(() => summarisePairs([], [], load)).toThrow("non-empty");
  });

  it("interleaves A B, B A, … after one warm-up of each", async () => {
    const order: string[] = [];
    const side =
      (name: string) =>
      async (rep: number): Promise<number> => {
        order.push(`${name}${rep}`);
        return 1;
      };
    await measurePaired(side("S"), side("B"), 4);
    expect(order).toEqual(["B-1", "S-1", "S0", "B0", "B1", "S1", "S2", "B2", "B3", "S3"]);
    expect([0, 1, 2, 3].map(subjectFirst)).toEqual([true, false, true, false]);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });
});
