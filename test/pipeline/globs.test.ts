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

  it("normalises a pattern: every leading `./`, runs of `/`, a trailing `/` as the folder's whole content", () => {
    expect(normalizePattern("././src/a.ts")).toBe("src/a.ts");
    // Only a leading `./` goes: one inside a path is part of it.
    expect(normalizePattern("src/./a.ts")).toBe("src/./a.ts");
    expect(normalizePattern("src///a//b.ts")).toBe("src/a/b.ts");
    expect(normalizePattern("docs/")).toBe("docs/**");
    expect(normalizePattern("docs")).toBe("docs");
    expect(matchesPattern("docs/", "docs")).toBe(false);
    expect(matchesPattern("docs", "docs")).toBe(true);
  });

  it("counts one step per segment position and character compared, and none for a plain path", () => {
    const plain: MatchMeter = { steps: 0 };
    expect(matchesPattern("src/a.ts", "src/a.ts", plain)).toBe(true);
    expect(plain.steps).toBe(0);
    const glob: MatchMeter = { steps: 0 };
    // Two segment positions; "a" against "a" in one step; "b.ts" against "*.ts" in five (the `*` is
    // met, "." misses "b", the `*` takes "b", then ".", "t", "s").
    expect(matchesPattern("a/*.ts", "a/b.ts", glob)).toBe(true);
    expect(glob.steps).toBe(2 + 1 + 5);
  });

  it("decides overlaps exactly for plain paths and same-depth globs, and conservatively across `**`", () => {
    expect(patternsOverlap("src/a.ts", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src/a.ts", "src/b.ts")).toBe(false);
    expect(patternsOverlap("src/*.ts", "src/a.ts")).toBe(true);
    expect(patternsOverlap("src/a.ts", "lib/*.ts")).toBe(false);
    expect(patternsOverlap("src/*.ts", "src/*.md")).toBe(false);
    expect(patternsOverlap("src/*.ts", "src/x/*.ts")).toBe(false);
    expect(patternsOverlap("src/a*", "src/*b")).toBe(true);
    expect(patternsOverlap("**/*.md", "src/**/*.ts")).toBe(false);
    expect(patternsOverlap("docs/**", "docs/**/*.md")).toBe(true);
    expect(patternsOverlap("docs/**", "src/**")).toBe(false);
    // A plain path against a glob, either way round: covered, or a directory above what the glob names.
    expect(patternsOverlap("src/x/y.ts", "src/**")).toBe(true);
    expect(patternsOverlap("src/**", "src/x/y.ts")).toBe(true);
    expect(patternsOverlap("src", "src/**/*.ts")).toBe(true);
    expect(patternsOverlap("src/**/*.ts", "src")).toBe(true);
    expect(patternsOverlap("lib", "src/**/*.ts")).toBe(false);
    expect(patternsOverlap("src/**/*.ts", "lib")).toBe(false);
    expect(patternsOverlap("srcx/a.ts", "src/**")).toBe(false);
    // Same-depth globs, segment by segment: literal prefixes and suffixes must agree.
    expect(patternsOverlap("src/ab*.ts", "src/a*.ts")).toBe(true);
    expect(patternsOverlap("src/ab*.ts", "src/ac*.ts")).toBe(false);
    expect(patternsOverlap("src/*x.ts", "src/*.ts")).toBe(true);
    expect(patternsOverlap("src/*x.ts", "src/*y.ts")).toBe(false);
    expect(patternsOverlap("src/a?", "src/?b")).toBe(true);
    expect(patternsOverlap("*/a.ts", "src/*.ts")).toBe(true);
    expect(patternsOverlap("*/a.ts", "src/*.md")).toBe(false);
    // Across `**`: a last `**` on either side meets any name under the shared folder.
    expect(patternsOverlap("src/**", "src/x/*.md")).toBe(true);
    expect(patternsOverlap("src/x/*.md", "src/**")).toBe(true);
    expect(patternsOverlap("**/*.md", "docs/*.md")).toBe(true);
  });

  it("takes a `*` in a path as a character the pattern's `*` may cover, not as a wildcard of the path", () => {
    // A file may be named with a literal `*`: the pattern's `*` still spans it and what follows.
    expect(matchesPattern("src/a*", "src/a*b")).toBe(true);
    expect(matchesPattern("src/a*", "src/*b")).toBe(false);
  });

  it("tells overlaps apart segment by segment: depths, literal folders, names, prefixes and suffixes", () => {
    // Same-depth globs without `**` never meet at another depth, whichever side is shorter.
    expect(patternsOverlap("src/*.ts", "src/*/x.ts")).toBe(false);
    expect(patternsOverlap("src/*/x.ts", "src/*.ts")).toBe(false);
    // Two literal folders at the same depth meet only when they are the same.
    expect(patternsOverlap("src/*.ts", "lib/*.ts")).toBe(false);
    expect(patternsOverlap("src/**/a.ts", "src/**/b.ts")).toBe(false);
    // A literal segment against a wildcard one is matched, not guessed from prefix and suffix.
    expect(patternsOverlap("src/axc/*.ts", "src/a?y?c/*.ts")).toBe(false);
    expect(patternsOverlap("src/a?y?c/*.ts", "src/axc/*.ts")).toBe(false);
    // The names compared across `**` are the last segments, not the second.
    expect(patternsOverlap("docs/**/*.md", "docs/**/*.ts")).toBe(false);
    // One literal prefix (or suffix) extending the other may still meet.
    expect(patternsOverlap("src/ab*", "src/abc*")).toBe(true);
    expect(patternsOverlap("src/*.ts", "src/*x.ts")).toBe(true);
  });

  it("covers a path when any pattern does, and none when there is none", () => {
    expect(matchesAny("src/a.ts", ["lib/**", "src/*.ts"])).toBe(true);
    expect(matchesAny("src/a.ts", ["lib/**", "src/*.md"])).toBe(false);
    expect(matchesAny("src/a.ts", [])).toBe(false);
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
