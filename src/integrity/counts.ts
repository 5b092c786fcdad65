/**
 * How many tests a suite ran, read from the output it printed: node's test runner (TAP and
 * spec summaries), jest, vitest, mocha, pytest, `go test -v` and `cargo test`. Line by line,
 * each line parsed by hand (a log is the repository's output: no backtracking expression runs
 * over it). A runner that printed nothing this module can read gives no count, and a
 * comparison without counts on both sides is "not compared", never a finding.
 */
import { stripAnsi } from "../text/index.js";
import { plural, type Finding } from "./change.js";

export const RUNNERS = ["node", "jest", "vitest", "mocha", "pytest", "go", "cargo"] as const;
export type Runner = (typeof RUNNERS)[number];

/** Tests run (passed or failed; skipped and to-do ones are not run) per runner found in a log. */
export type RunCounts = Partial<Record<Runner, number>>;

/** Lines longer than this are no runner's summary and are not parsed. */
const MAX_LINE = 2000;

/** The whole number at `text[at…]` and where it ends, or undefined. */
function numberAt(text: string, at: number): { value: number; end: number } | undefined {
  let end = at;
  while (end < text.length && text.charCodeAt(end) >= 0x30 && text.charCodeAt(end) <= 0x39) end += 1;
  if (end === at || end - at > 12) return undefined;
  return { value: Number(text.slice(at, end)), end };
}

/** `<n> <word>` pairs of a summary such as `1 skipped, 3 passed, 4 total` or `2 passed | 1 skipped (3)`. */
function tally(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const previous = i === 0 ? 0x20 : text.charCodeAt(i - 1);
    const atWordStart = previous === 0x20 || previous === 0x2c || previous === 0x7c || previous === 0x3a || previous === 0x28;
    if (code >= 0x30 && code <= 0x39 && atWordStart) {
      const number = numberAt(text, i);
      if (number && text.charCodeAt(number.end) === 0x20) {
        let end = number.end + 1;
        while (end < text.length && text.charCodeAt(end) >= 0x61 && text.charCodeAt(end) <= 0x7a) end += 1;
        const word = text.slice(number.end + 1, end);
        if (word !== "") counts.set(word, (counts.get(word) ?? 0) + number.value);
        i = end;
        continue;
      }
    }
    i += 1;
  }
  return counts;
}

const sum = (counts: Map<string, number>, ...words: string[]): number => words.reduce((total, word) => total + (counts.get(word) ?? 0), 0);

/** The count one summary line gives, and its runner; undefined for any other line. */
function lineCount(line: string): { runner: Runner; ran: number } | undefined {
  // node --test: `# pass 3` (TAP) or `ℹ pass 3` (spec); `# fail 1` alike.
  for (const lead of ["# ", "ℹ "]) {
    if (!line.startsWith(lead)) continue;
    for (const word of ["pass ", "fail "]) {
      if (!line.startsWith(word, lead.length)) continue;
      const number = numberAt(line, lead.length + word.length);
      if (number && number.end === line.length) return { runner: "node", ran: number.value };
    }
    return undefined;
  }
  if (line.startsWith("Tests:") && line.endsWith(" total")) {
    const counts = tally(line.slice(6));
    return { runner: "jest", ran: sum(counts, "passed", "failed") };
  }
  if (line.startsWith("Tests ") && line.endsWith(")")) {
    const counts = tally(line.slice(6));
    if (counts.has("passed") || counts.has("failed")) return { runner: "vitest", ran: sum(counts, "passed", "failed") };
  }
  if (line.startsWith("--- PASS: ") || line.startsWith("--- FAIL: ")) return { runner: "go", ran: 1 };
  if (line.startsWith("test result: ")) {
    const counts = tally(line.slice(13).split(";").join(","));
    return { runner: "cargo", ran: sum(counts, "passed", "failed") };
  }
  const first = numberAt(line, 0);
  if (first && (line.startsWith(" passing (", first.end) || line.startsWith(" failing", first.end))) {
    return { runner: "mocha", ran: first.value };
  }
  return pytestCount(line);
}

/** pytest's last line: `=== 3 passed, 1 skipped in 0.12s ===` (or without the rules, with -q). */
function pytestCount(line: string): { runner: Runner; ran: number } | undefined {
  let text = line;
  while (text.startsWith("=")) text = text.slice(1);
  while (text.endsWith("=")) text = text.slice(0, -1);
  text = text.trim();
  const at = text.lastIndexOf(" in ");
  if (at < 0 || !text.endsWith("s")) return undefined;
  const counts = tally(text.slice(0, at));
  const words = ["passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors", "warning", "warnings", "deselected", "rerun"];
  if (counts.size === 0 || [...counts.keys()].some((word) => !words.includes(word))) return undefined;
  if (!counts.has("passed") && !counts.has("failed")) return undefined;
  return { runner: "pytest", ran: sum(counts, "passed", "failed", "xfailed", "xpassed") };
}

/** The tests each runner reports in `log` (a suite's output, ANSI colours and all). */
export function readRunCounts(log: string): RunCounts {
  const counts: RunCounts = {};
  for (const raw of stripAnsi(log).split("\n")) {
    if (raw.length > MAX_LINE) continue;
    const found = lineCount(raw.trim());
    if (found) counts[found.runner] = (counts[found.runner] ?? 0) + found.ran;
  }
  return counts;
}

/** How the counts compared: on both sides, or why not. */
export type CountComparison = { compared: true; base: RunCounts; head: RunCounts } | { compared: false; reason: string };

/**
 * Compares the base's counts with the work's; a runner that ran fewer tests (or none) is a
 * finding. `baseMissing` says why the base has no counts, when the caller knows better than
 * "no log".
 */
export function compareRunCounts(
  base: RunCounts | undefined,
  head: RunCounts | undefined,
  baseMissing = "a suite log was not available",
): { comparison: CountComparison; findings: Finding[] } {
  if (!base) return { comparison: { compared: false, reason: baseMissing }, findings: [] };
  if (!head) return { comparison: { compared: false, reason: "a suite log was not available" }, findings: [] };
  const runners = RUNNERS.filter((runner) => base[runner] !== undefined);
  if (runners.length === 0) return { comparison: { compared: false, reason: "the base run printed no test count the gate can read" }, findings: [] };
  if (!RUNNERS.some((runner) => head[runner] !== undefined))
    return { comparison: { compared: false, reason: "the clean clone's run printed no test count the gate can read" }, findings: [] };
  const findings: Finding[] = [];
  for (const runner of runners) {
    const was = base[runner] ?? 0;
    const now = head[runner] ?? 0;
    if (now < was)
      findings.push({ file: "", line: 1, kind: "fewer-tests-run", message: `${runner} ran ${plural(was, "test")} on the base and ${now} in the clean clone` });
  }
  return { comparison: { compared: true, base, head }, findings };
}
