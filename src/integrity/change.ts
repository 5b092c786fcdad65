/** The change the gate judges, and what it finds in it: shapes shared by the pure core and its git adapter. */

/** One file of the change from the base to the work, with both sides' text where it was read. */
export interface FileChange {
  status: "added" | "modified" | "deleted" | "renamed";
  /** The path on the base (absent for an added file). */
  oldPath?: string;
  /** The path in the work (absent for a deleted file). */
  newPath?: string;
  /** The base's text; absent when the file is new, binary, too large, or not one the gate reads. */
  oldText?: string;
  newText?: string;
  /** Why a side the gate wanted was not read. */
  unread?: "binary" | "too-large" | "over-budget" | "not-a-file";
}

/** What a finding says changed. */
export const FINDING_KINDS = [
  "test-file-deleted",
  "test-file-emptied",
  "test-file-moved-out",
  "fewer-test-cases",
  "skip-added",
  "fewer-assertions",
  "test-config-changed",
  "coverage-lowered",
  "ci-workflow-changed",
  "suppression-added",
  "fewer-tests-run",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** One way the change weakened the suite: where (1-based line of the work's side, 1 for a file that is gone) and what. */
export interface Finding {
  file: string;
  line: number;
  kind: FindingKind;
  message: string;
}

/** The line of `next` where it first differs from `previous` (1-based; 1 when either is absent or they agree). */
export function firstDifferingLine(previous: string | undefined, next: string | undefined): number {
  if (previous === undefined || next === undefined) return 1;
  let line = 1;
  let a = 0;
  let b = 0;
  for (;;) {
    const endA = previous.indexOf("\n", a);
    const endB = next.indexOf("\n", b);
    const lineA = previous.slice(a, endA < 0 ? previous.length : endA);
    const lineB = next.slice(b, endB < 0 ? next.length : endB);
    if (lineA !== lineB) return line;
    if (endA < 0 && endB < 0) return 1;
    // One side goes on: the work's extra lines start after this one (or, when the work ended, here).
    if (endA < 0 || endB < 0) return endB < 0 ? line : line + 1;
    a = endA + 1;
    b = endB + 1;
    line += 1;
  }
}

/** The line number (1-based) of the first occurrence of `needle` in `text`, or 1. */
export function lineOf(text: string | undefined, needle: string): number {
  if (text === undefined) return 1;
  const at = text.indexOf(needle);
  if (at < 0) return 1;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line += 1;
  return line;
}

/** "1 test case", "3 test cases". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
