/**
 * The file patterns of a plan's tasks: paths or globs relative to the repository root. `*`
 * and `?` stay inside one path segment, `**` spans segments, and a pattern without
 * wildcards (or ending in `/`) also covers everything under it as a directory. No regular
 * expression is built from a pattern: plans come from issue authors and the planner agent, and a
 * backtracking expression over `*a*a*a…*b` froze the App's thread for minutes.
 */

const WILDCARD = /[*?]/;

/** The pattern in its normal form: no leading `./`, a trailing `/` turned into `/**`. */
export function normalizePattern(pattern: string): string {
  let normal = pattern.replace(/^(\.\/)+/, "").replace(/\/{2,}/g, "/");
  if (normal.endsWith("/")) normal = `${normal}**`;
  return normal;
}

/**
 * Counts the work of a match, for tests that prove it stays polynomial on hostile patterns
 * (a plan is written by an issue author or the planner agent, and is matched on the App's thread).
 */
export interface MatchMeter {
  steps: number;
}

/**
 * Whether one path segment matches one pattern segment of `*` (any run of characters) and `?`
 * (one character), the classic two-pointer way: on a mismatch only the last `*` takes one
 * more character. That is exact, since a later `*` can take whatever an earlier one could,
 * and it costs at most `pattern.length × text.length` steps — no backtracking explosion.
 */
function segmentMatches(pattern: string, text: string, meter?: MatchMeter): boolean {
  // UTF-16 units, as the expression this replaced counted them (`?` is one unit).
  const p = pattern;
  const t = text;
  let pi = 0;
  let ti = 0;
  let star = -1;
  let starText = 0;
  while (ti < t.length) {
    if (meter) meter.steps += 1;
    if (pi < p.length && (p[pi] === "?" || (p[pi] !== "*" && p[pi] === t[ti]))) {
      pi += 1;
      ti += 1;
    } else if (pi < p.length && p[pi] === "*") {
      star = pi;
      starText = ti;
      pi += 1;
    } else if (star >= 0) {
      starText += 1;
      ti = starText;
      pi = star + 1;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === "*") pi += 1;
  return pi === p.length;
}

/**
 * Whether `path` is covered by `pattern`. Segment by segment, as a set of pattern positions
 * advanced once per path segment (no backtracking): a `**` before the last segment takes zero
 * or more non-empty segments; a last `**` takes every remaining segment (at least one: `src/**`
 * covers `src/` and `src/a/b`, not `src`); any other segment matches exactly one path segment.
 * Costs at most (pattern segments × path segments) segment matches.
 */
export function matchesPattern(pattern: string, path: string, meter?: MatchMeter): boolean {
  const normal = normalizePattern(pattern);
  // A plain path covers itself and, as a directory, everything under it.
  if (!WILDCARD.test(normal)) return path === normal || path.startsWith(`${normal}/`);
  const parts = normal.split("/");
  const last = parts.length - 1;
  const tailGlob = parts[last] === "**";
  const closure = (states: Set<number>): Set<number> => {
    // A `**` before the last segment may take nothing: its position also stands for the next one.
    for (let index = 0; index < last; index += 1) if (states.has(index) && parts[index] === "**") states.add(index + 1);
    return states;
  };
  let states = closure(new Set([0]));
  for (const segment of path.split("/")) {
    const next = new Set<number>();
    for (const index of states) {
      if (meter) meter.steps += 1;
      if (index > last) {
        // Past the end: only a last `**` keeps taking segments.
        if (tailGlob) next.add(index);
        continue;
      }
      const part = parts[index] ?? "";
      if (part === "**") {
        if (index === last) next.add(index + 1);
        else if (segment !== "") next.add(index);
      } else if (segmentMatches(part, segment, meter)) {
        next.add(index + 1);
      }
    }
    states = closure(next);
    if (states.size === 0) return false;
  }
  return states.has(parts.length);
}

/** True when `path` is covered by one of `patterns`. */
export function matchesAny(path: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => matchesPattern(pattern, path));
}

/**
 * Whether two patterns may cover a common path. Exact for a plain path against anything, and
 * for globs of the same depth without `**` (segment by segment, by literal prefix and suffix);
 * otherwise conservative: globs whose file names may agree and whose literal leading
 * directories nest are taken to overlap (a plain path may be a directory).
 */
export function patternsOverlap(a: string, b: string): boolean {
  const left = normalizePattern(a);
  const right = normalizePattern(b);
  const leftPlain = !WILDCARD.test(left);
  const rightPlain = !WILDCARD.test(right);
  if (leftPlain && rightPlain) return nested(left, right);
  if (leftPlain) return matchesPattern(right, left) || nested(left, staticPrefix(right));
  if (rightPlain) return matchesPattern(left, right) || nested(right, staticPrefix(left));
  const leftSegments = left.split("/");
  const rightSegments = right.split("/");
  if (!leftSegments.includes("**") && !rightSegments.includes("**")) {
    if (leftSegments.length !== rightSegments.length) return false;
    return leftSegments.every((segment, index) => segmentsOverlap(segment, rightSegments[index] ?? ""));
  }
  // With `**`, the names must still agree: `**/*.md` and `src/**/*.ts` cannot meet.
  const leftName = leftSegments.at(-1) ?? "";
  const rightName = rightSegments.at(-1) ?? "";
  if (leftName !== "**" && rightName !== "**" && !segmentsOverlap(leftName, rightName)) return false;
  return nested(staticPrefix(left), staticPrefix(right));
}

/** The leading segments without wildcards, as a path ("" for none). */
function staticPrefix(pattern: string): string {
  const segments = pattern.split("/");
  const first = segments.findIndex((segment) => WILDCARD.test(segment));
  return segments.slice(0, first < 0 ? segments.length : first).join("/");
}

/** True when one path is the other or lies under it ("" lies over everything). */
function nested(a: string, b: string): boolean {
  if (a === "" || b === "") return true;
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

function segmentsOverlap(a: string, b: string): boolean {
  const aPlain = !WILDCARD.test(a);
  const bPlain = !WILDCARD.test(b);
  if (aPlain && bPlain) return a === b;
  if (aPlain) return matchesPattern(b, a);
  if (bPlain) return matchesPattern(a, b);
  const prefix = (text: string): string => text.slice(0, text.search(WILDCARD));
  const suffix = (text: string): string => text.slice(Math.max(text.lastIndexOf("*"), text.lastIndexOf("?")) + 1);
  const [pa, pb, sa, sb] = [prefix(a), prefix(b), suffix(a), suffix(b)];
  return (pa.startsWith(pb) || pb.startsWith(pa)) && (sa.endsWith(sb) || sb.endsWith(sa));
}
