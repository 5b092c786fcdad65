/**
 * The file patterns of a plan's tasks: paths or globs relative to the repository root. `*`
 * and `?` stay inside one path segment, `**` spans segments, and a pattern without
 * wildcards (or ending in `/`) also covers everything under it as a directory.
 */

const WILDCARD = /[*?]/;

/** The pattern in its normal form: no leading `./`, a trailing `/` turned into `/**`. */
export function normalizePattern(pattern: string): string {
  let normal = pattern.replace(/^(\.\/)+/, "").replace(/\/{2,}/g, "/");
  if (normal.endsWith("/")) normal = `${normal}**`;
  return normal;
}

const escape = (text: string): string => text.replace(/[.+^${}()|[\]\\]/g, "\\$&");

/** A regular expression that matches exactly the paths `pattern` covers. */
export function patternRegExp(pattern: string): RegExp {
  const normal = normalizePattern(pattern);
  if (!WILDCARD.test(normal)) return new RegExp(`^${escape(normal)}(?:/.*)?$`);
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

/** True when `path` is covered by one of `patterns`. */
export function matchesAny(path: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => patternRegExp(pattern).test(path));
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
  if (leftPlain) return patternRegExp(right).test(left) || nested(left, staticPrefix(right));
  if (rightPlain) return patternRegExp(left).test(right) || nested(right, staticPrefix(left));
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
  if (aPlain) return patternRegExp(b).test(a);
  if (bPlain) return patternRegExp(a).test(b);
  const prefix = (text: string): string => text.slice(0, text.search(WILDCARD));
  const suffix = (text: string): string => text.slice(Math.max(text.lastIndexOf("*"), text.lastIndexOf("?")) + 1);
  const [pa, pb, sa, sb] = [prefix(a), prefix(b), suffix(a), suffix(b)];
  return (pa.startsWith(pb) || pb.startsWith(pa)) && (sa.endsWith(sb) || sb.endsWith(sa));
}
