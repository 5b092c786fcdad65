/**
 * What a test file holds, counted line by line: its test cases, its assertions, and the lines
 * that skip or focus a test. The text is the change's, so untrusted: every match is a literal
 * search (`indexOf`) with a word-boundary check, one pass per needle, never a backtracking
 * expression. Comments are left out of the counts (a test commented out is a test gone), so
 * lines are read through {@link codeLines}.
 */
import type { Language } from "./paths.js";

/** A needle and whether the character before it must not continue an identifier (`xit(` is not in `exit(`). */
interface Needle {
  text: string;
  bounded: boolean;
}

const bounded = (...texts: string[]): Needle[] => texts.map((text) => ({ text, bounded: true }));
const anywhere = (...texts: string[]): Needle[] => texts.map((text) => ({ text, bounded: false }));

/** How each language writes a test case. Lines are searched with their spaces removed. */
const CASES: Record<Language, Needle[]> = {
  js: bounded("it(", "it.", "test(", "test.", "describe(", "describe.", "suite(", "xit(", "xtest(", "xdescribe(", "fit(", "fdescribe(", "t.test("),
  python: bounded("deftest", "asyncdeftest", "classTest"),
  go: bounded("funcTest"),
  rust: anywhere("#[test]", "#[tokio::test", "#[async_std::test"),
  java: anywhere("@Test", "@ParameterizedTest", "@RepeatedTest", "@TestFactory"),
  ruby: bounded("it'", 'it"', "it(", "it{", "deftest_", "specify"),
};

/** How each language asserts. */
const ASSERTIONS: Record<Language, Needle[]> = {
  js: [...bounded("expect(", "assert(", "assert.", "expect.", "should."), ...anywhere(".should", "t.assert", "t.is(", "t.deepEqual(", "t.true(", "t.false(")],
  python: [...bounded("assert", "pytest.raises(", "pytest.warns(", "pytest.approx("), ...anywhere("self.assert", "self.fail(")],
  go: anywhere("t.Error", "t.Fatal", "t.Fail", "assert.", "require.", "b.Error", "b.Fatal"),
  rust: anywhere("assert!(", "assert_eq!(", "assert_ne!(", "debug_assert", "panic!(", "should_panic"),
  java: [...bounded("assert", "verify(", "fail("), ...anywhere(".assert", ".verify(")],
  ruby: bounded("expect(", "expect{", "assert", "refute", "must_", "wont_"),
};

/** How each language skips, focuses or parks a test. */
const SKIPS: Record<Language, Needle[]> = {
  js: [
    ...anywhere(".skip(", ".skip`", ".skipIf(", ".only(", ".only`", ".todo(", "{skip:", ",skip:", "{todo:", ",todo:", "{only:", ",only:"),
    ...bounded("xit(", "xtest(", "xdescribe(", "xcontext(", "fit(", "fdescribe(", "ftest("),
  ],
  python: anywhere(
    "@pytest.mark.skip",
    "@pytest.mark.xfail",
    "@unittest.skip",
    "@unittest.expectedFailure",
    "pytest.skip(",
    ".skipTest(",
    "pytest.importorskip(",
  ),
  go: anywhere(".Skip(", ".Skipf(", ".SkipNow("),
  rust: anywhere("#[ignore"),
  java: anywhere("@Disabled", "@Ignore"),
  ruby: bounded("skip", "xit", "xdescribe", "pending"),
};

/** Lint and type suppressions, searched in lower case with spaces removed, in any code file. */
const SUPPRESSIONS: Needle[] = anywhere(
  "eslint-disable",
  "@ts-ignore",
  "@ts-expect-error",
  "@ts-nocheck",
  "#noqa",
  "#type:ignore",
  "#pyright:ignore",
  "//nolint",
  "#pylint:disable",
  "#[allow(",
  "@suppresswarnings",
  "biome-ignore",
  "istanbulignore",
  "c8ignore",
  "pragma:nocover",
);

/** The characters of an identifier: a match preceded by one is inside a longer name. */
function isIdentifierChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x24;
}

/** Occurrences of `needle` in `line`: one `indexOf` walk, so linear in the line. */
function occurrences(line: string, needle: Needle): number {
  let found = 0;
  for (let at = line.indexOf(needle.text); at >= 0; at = line.indexOf(needle.text, at + needle.text.length)) {
    if (!needle.bounded || at === 0) found += 1;
    else {
      const before = line.charCodeAt(at - 1);
      // `regex.test(x)` is not a test case, `t.test(…)` is (its needle spells the `t.`).
      if (!isIdentifierChar(before) && before !== 0x2e) found += 1;
    }
  }
  return found;
}

function countIn(line: string, needles: readonly Needle[]): number {
  let total = 0;
  for (const needle of needles) total += occurrences(line, needle);
  return total;
}

/** A line of a file: its 1-based number and its text with spaces removed. */
export interface CodeLine {
  line: number;
  text: string;
}

/** The line's text without spaces or tabs: `it .skip (` and `it.skip(` are read alike. */
export function squeeze(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0d) out += text[i];
  }
  return out;
}

/**
 * The code of a file line by line, comments removed: `//` and `/* … *\/` for the C-like
 * languages, `#` for Python and Ruby (quoted text is not parsed: a `//` inside a string ends
 * that line's code early, which only ever hides the rest of that one line). Empty lines are left out.
 */
export function codeLines(text: string, language: Language): CodeLine[] {
  const hash = language === "python" || language === "ruby";
  const lines: CodeLine[] = [];
  let inBlock = false;
  let number = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    number += 1;
    let code = "";
    let i = start;
    while (i < end) {
      if (inBlock) {
        const close = text.indexOf("*/", i);
        if (close < 0 || close >= end) {
          i = end;
          break;
        }
        inBlock = false;
        i = close + 2;
        continue;
      }
      const c = text.charCodeAt(i);
      if (hash && c === 0x23) break;
      if (!hash && c === 0x2f && text.charCodeAt(i + 1) === 0x2f) break;
      if (!hash && c === 0x2f && text.charCodeAt(i + 1) === 0x2a) {
        inBlock = true;
        i += 2;
        continue;
      }
      code += text[i];
      i += 1;
    }
    // Rust's attributes start with `#`, which is code there.
    const squeezed = squeeze(code);
    if (squeezed !== "") lines.push({ line: number, text: squeezed });
    start = end + 1;
  }
  return lines;
}

/** What the gate counts in one test file. */
export interface TestFileScan {
  cases: number;
  assertions: number;
  /** Lines that skip or focus a test, with their squeezed text (to tell an added one from a kept one). */
  skips: CodeLine[];
}

/** Counts the test cases, assertions and skip or focus lines of a test file in `language`. */
export function scanTestFile(text: string, language: Language): TestFileScan {
  const scan: TestFileScan = { cases: 0, assertions: 0, skips: [] };
  for (const line of codeLines(text, language)) {
    scan.cases += countIn(line.text, CASES[language]);
    scan.assertions += countIn(line.text, ASSERTIONS[language]);
    if (countIn(line.text, SKIPS[language]) > 0) scan.skips.push(line);
  }
  return scan;
}

/** The lines of a code file that suppress a lint or type check (comments included: that is where they live). */
export function suppressionLines(text: string): CodeLine[] {
  const found: CodeLine[] = [];
  let number = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    number += 1;
    const squeezed = squeeze(text.slice(start, end)).toLowerCase();
    if (squeezed !== "" && countIn(squeezed, SUPPRESSIONS) > 0) found.push({ line: number, text: squeezed });
    start = end + 1;
  }
  return found;
}
