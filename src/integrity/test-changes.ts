/**
 * Findings on the test files of a change: deleted, emptied or moved out of the test paths,
 * fewer cases, fewer assertions, a skip or focus added, a suppression added. Counts are
 * compared over all the change's test files together before any file is blamed, so a case
 * moved from one file to another, or a test file renamed with its cases, raises nothing; a
 * skip or suppression line counts as added only when the base did not have the same line
 * somewhere in the changed files.
 */
import { firstDifferingLine, plural, type FileChange, type Finding } from "./change.js";
import { isTestPath, languageOf } from "./paths.js";
import { scanTestFile, suppressionLines, type CodeLine, type TestFileScan } from "./scan.js";

interface Sides {
  change: FileChange;
  file: string;
  old?: TestFileScan;
  next?: TestFileScan;
}

/** A multiset of line texts: the base's skips or suppressions, consumed by the work's. */
class LineBag {
  private readonly counts = new Map<string, number>();
  add(lines: readonly CodeLine[]): void {
    for (const line of lines) this.counts.set(line.text, (this.counts.get(line.text) ?? 0) + 1);
  }
  /** True when the base had this line (one of its copies is then used up). */
  take(text: string): boolean {
    const left = this.counts.get(text) ?? 0;
    if (left === 0) return false;
    this.counts.set(text, left - 1);
    return true;
  }
}

function scanSide(path: string | undefined, text: string | undefined): TestFileScan | undefined {
  if (path === undefined || text === undefined || !isTestPath(path, text)) return undefined;
  const language = languageOf(path);
  return language === undefined ? undefined : scanTestFile(text, language);
}

/** The findings on the test files and code files of `changes`. */
export function testFindings(changes: readonly FileChange[]): Finding[] {
  const sides: Sides[] = changes.map((change) => {
    const file = change.newPath ?? change.oldPath ?? "";
    const old = scanSide(change.oldPath, change.oldText);
    const next = scanSide(change.newPath, change.newText);
    return { change, file, ...(old ? { old } : {}), ...(next ? { next } : {}) };
  });
  const total = (pick: (side: Sides) => number): number => sides.reduce((sum, side) => sum + pick(side), 0);
  const casesBefore = total((side) => side.old?.cases ?? 0);
  const casesAfter = total((side) => side.next?.cases ?? 0);
  const assertionsBefore = total((side) => side.old?.assertions ?? 0);
  const assertionsAfter = total((side) => side.next?.assertions ?? 0);
  const fewerCases = casesAfter < casesBefore;
  const fewerAssertions = assertionsAfter < assertionsBefore;
  const findings: Finding[] = [];
  for (const side of sides) {
    const { change, old } = side;
    if (!old || (old.cases === 0 && old.assertions === 0)) continue;
    const held = `${plural(old.cases, "test case")} and ${plural(old.assertions, "assertion")}`;
    const readable = change.newPath !== undefined && change.newText !== undefined;
    if (!side.next && readable && change.status === "renamed") {
      // Renamed to a path the runner does not collect: its cases no longer run.
      findings.push({
        file: side.file,
        line: 1,
        kind: "test-file-moved-out",
        message: `test file ${change.oldPath ?? ""} moved out of the test paths (it held ${held})`,
      });
      continue;
    }
    if (!fewerCases && !fewerAssertions) continue;
    if (change.status === "deleted") {
      findings.push({ file: side.file, line: 1, kind: "test-file-deleted", message: `test file deleted (it held ${held})` });
      continue;
    }
    // A file still there but no longer a test file (a Rust file without its `#[test]`s) holds none.
    const next = side.next ?? (readable ? { cases: 0, assertions: 0, skips: [] } : undefined);
    if (!next) continue;
    const line = firstDifferingLine(change.oldText, change.newText);
    if (next.cases === 0 && next.assertions === 0) {
      findings.push({ file: side.file, line, kind: "test-file-emptied", message: `test file emptied: ${held} on the base, none now` });
      continue;
    }
    if (fewerCases && next.cases < old.cases)
      findings.push({ file: side.file, line, kind: "fewer-test-cases", message: `${plural(old.cases, "test case")} on the base, ${next.cases} now` });
    if (fewerAssertions && next.assertions < old.assertions)
      findings.push({ file: side.file, line, kind: "fewer-assertions", message: `${plural(old.assertions, "assertion")} on the base, ${next.assertions} now` });
  }
  findings.push(
    ...addedLines(
      sides,
      (side) => side.old?.skips,
      (side) => side.next?.skips,
      "skip-added",
      "a test skipped or focused",
    ),
  );
  findings.push(...suppressionFindings(changes));
  return findings;
}

function addedLines(
  sides: readonly Sides[],
  before: (side: Sides) => readonly CodeLine[] | undefined,
  after: (side: Sides) => readonly CodeLine[] | undefined,
  kind: "skip-added",
  what: string,
): Finding[] {
  const bag = new LineBag();
  for (const side of sides) bag.add(before(side) ?? []);
  const findings: Finding[] = [];
  for (const side of sides)
    for (const line of after(side) ?? [])
      if (!bag.take(line.text)) findings.push({ file: side.file, line: line.line, kind, message: `${what}: \`${shown(line.text)}\`` });
  return findings;
}

/** Lint and type suppressions added to any code file of the change. */
function suppressionFindings(changes: readonly FileChange[]): Finding[] {
  const code = changes.filter((change) => languageOf(change.newPath ?? change.oldPath ?? "") !== undefined);
  const bag = new LineBag();
  for (const change of code) if (change.oldText !== undefined) bag.add(suppressionLines(change.oldText));
  const findings: Finding[] = [];
  for (const change of code) {
    if (change.newText === undefined || change.newPath === undefined) continue;
    for (const line of suppressionLines(change.newText))
      if (!bag.take(line.text))
        findings.push({
          file: change.newPath,
          line: line.line,
          kind: "suppression-added",
          message: `a lint or type check suppressed: \`${shown(line.text)}\``,
        });
  }
  return findings;
}

/** A matched line as a message shows it: squeezed, at most 120 characters, no backticks to break the code span. */
function shown(text: string): string {
  const plain = text.split("`").join("'");
  return plain.length > 120 ? `${plain.slice(0, 119)}…` : plain;
}
