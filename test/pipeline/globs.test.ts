/**
 * The plan's file globs (src/pipeline/globs.ts) are matched without any regular expression built
 * from a pattern. Issue 30, finding 4: `*a` twelve times then `*b` against a 48-character path
 * made the old backtracking expression run for minutes on the App's thread. The old expression
 * is kept here only as the oracle the new matcher must agree with.
 */
import { matchesAny, matchesPattern, normalizePattern, patternsOverlap, type MatchMeter } from "../../src/pipeline/globs.js";

/** The matcher this file's subject replaced, verbatim in behaviour: the oracle. */
function oracle(pattern: string): RegExp {
  const escape = (text: string): string => text.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  const normal = normalizePattern(pattern);
  if (!/[*?]/.test(normal)) return new RegExp(`^${escape(normal)}(?:/.*)?$`);
  const source = normal
    .split("/")
    .map((segment, index, all) => {
      if (segment === "**") return index === all.length - 1 ? ".*" : "(?:[^/]+/)*";
      const body = [...segment].map((char) => (char === "*" ? "[^/]*" : char === "?" ? "[^/]" : escape(char))).join("");
      return index === all.length - 1 ? body : `${body}/`;
    })
    .join("");
  return new RegExp(`^${source}$`);
}

/** A small deterministic generator (a test must be reproducible): mulberry32. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("matchesPattern", () => {
  it("answers the backtracking attack at once: `*a` twelve times then `*b` against a 48-character path", () => {
    const pattern = `${"*a".repeat(12)}*b`;
    const path = "a".repeat(48);
    const meter: MatchMeter = { steps: 0 };
    expect(matchesPattern(pattern, path, meter)).toBe(false);
    // Bounded by pattern length × path length per segment (25 × 48), not exponential.
    expect(meter.steps).toBeLessThanOrEqual(25 * 49 + 10);
    expect(matchesPattern(pattern, `${"a".repeat(47)}b`)).toBe(true);
    // The same through `**` segments, in a plan's overlap check and the changed-files check.
    const deep = `${"**/".repeat(12)}${"*a".repeat(12)}*b`;
    const deepMeter: MatchMeter = { steps: 0 };
    expect(matchesPattern(deep, `${"a/".repeat(24)}${"a".repeat(48)}`, deepMeter)).toBe(false);
    expect(deepMeter.steps).toBeLessThan(200_000);
    // The overlap check answers too (conservatively: a glob with no literal leading folder may lie under any path).
    expect(patternsOverlap(pattern, path)).toBe(true);
    expect(patternsOverlap(`src/${pattern}`, `src/${path}`)).toBe(true);
    expect(patternsOverlap(`src/${pattern}`, `lib/${path}`)).toBe(false);
    expect(matchesAny(path, [pattern, deep])).toBe(false);
  });

  it("keeps the semantics: `*` and `?` inside a segment, `**` across, a plain path as a directory", () => {
    expect(matchesPattern("src/**", "src/")).toBe(true);
    expect(matchesPattern("src/**", "src")).toBe(false);
    expect(matchesPattern("**", "")).toBe(true);
    expect(matchesPattern("a/**/b", "a//b")).toBe(false);
    expect(matchesPattern("a/**/b", "a/x/y/b")).toBe(true);
    expect(matchesPattern("**/*/**/x", "a//x")).toBe(true);
    expect(matchesPattern("./src//a*.ts", "src/ab.ts")).toBe(true);
    expect(matchesPattern("docs/", "docs/x/y.md")).toBe(true);
    expect(matchesPattern("src/[ab].ts", "src/[ab].ts")).toBe(true);
    expect(matchesPattern("src/[ab].ts", "src/a.ts")).toBe(false);
  });

  it("agrees with the old expression on thousands of random short patterns and paths", () => {
    const next = random(30);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const patternPieces = ["a", "b", ".", "/", "*", "?", "**", "**/", "./", "[", "]"];
    const pathPieces = ["a", "b", ".", "/", "ab", "[", "]", "é", "\u{1F600}"];
    const word = (pieces: readonly string[], most: number): string => Array.from({ length: Math.floor(next() * most) }, () => pick(pieces)).join("");
    let disagreements: string[] = [];
    let matched = 0;
    for (let round = 0; round < 5000; round += 1) {
      const pattern = word(patternPieces, 7);
      const path = word(pathPieces, 8);
      const expected = oracle(pattern).test(path);
      if (expected) matched += 1;
      if (matchesPattern(pattern, path) !== expected)
        disagreements = [...disagreements, `${JSON.stringify(pattern)} vs ${JSON.stringify(path)}: expected ${expected}`];
    }
    expect(disagreements).toEqual([]);
    // The sample is not all misses: both answers were exercised.
    expect(matched).toBeGreaterThan(100);
  });
});
