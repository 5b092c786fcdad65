/** The verdict logic of paired benchmarks (pure: no timing is measured here). */
import { formatPaired, measurePaired, median, medianDifference, subjectFirst, summarisePairs } from "../../bench/lib/paired.js";

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
    const result = summarisePairs([105, 210, 106], [100, 200, 100], load);
    expect(result.medianRatio).toBeCloseTo(1.05);
    expect(result.baselineSpread).toBe(1);
    expect(result.inconclusive).toBe(true);
    expect(formatPaired("x", result, { max: 1.3 })).toContain("INCONCLUSIVE");
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
