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
    // Quartiles 100 and 200 around a median of 150.
    expect(result.baselineSpread).toBeCloseTo(100 / 150);
    expect(result.inconclusive).toBe(true);
    expect(formatPaired("x", result, { max: 1.3 })).toContain("INCONCLUSIVE");
  });

  it("measures the baseline's movement by its interquartile range, so one stray sample does not void a run", () => {
    const steady = [100, 101, 99, 100, 102, 98, 100, 400, 100];
    const result = summarisePairs(steady.map((value) => value * 0.8), steady, load);
    // Sorted: 98 99 [100] 100 100 100 [101] 102 400: quartiles 100 and 101.
    expect(result.baselineSpread).toBeCloseTo(1 / 100);
    expect(result.inconclusive).toBe(false);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([5], 0.75)).toBe(5);
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
    const side = (name: string) => async (rep: number): Promise<number> => {
      order.push(`${name}${rep}`);
      return 1;
    };
    await measurePaired(side("S"), side("B"), 4);
    expect(order).toEqual(["B-1", "S-1", "S0", "B0", "B1", "S1", "S2", "B2", "B3", "S3"]);
    expect([0, 1, 2, 3].map(subjectFirst)).toEqual([true, false, true, false]);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });
});
