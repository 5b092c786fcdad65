/**
 * Regions of a comment that GitHub does not show as the comment's own text: HTML comments,
 * `<pre>`, `<script>`, `<style>`, `<textarea>` and `<details>` (collapsed; nested ones counted),
 * wherever they open on a line that is not code. A backtick code span on the line is skipped,
 * so `` `<details>` `` in prose hides nothing. Every search moves forward through the text, so
 * a scan of a whole comment stays linear.
 */

/** Tags whose content runs, raw, until the matching closing tag. */
const RAW_TAGS = ["pre", "script", "style", "textarea"] as const;
const CLOSERS: Record<(typeof RAW_TAGS)[number], RegExp> = {
  pre: /<\/pre\s*>/gi,
  script: /<\/script\s*>/gi,
  style: /<\/style\s*>/gi,
  textarea: /<\/textarea\s*>/gi,
};
const DETAILS_TAG = /<(\/?)details(?=[\s>/]|$)/gim;

/**
 * Finds one character in `[from, end)` ranges of a text with the engine's native indexOf,
 * remembering the next occurrence: ranges asked in increasing order (lines, one after the
 * other) cost one pass over the text in all, however far apart the occurrences are.
 */
export class CharFinder {
  private next = -2;
  private searchedFrom = 0;
  constructor(
    private readonly text: string,
    private readonly char: string,
  ) {}

  /** Index of the character in `[from, end)`, or -1. */
  within(from: number, end: number): number {
    if (this.next === -2 || from < this.searchedFrom || (this.next !== -1 && this.next < from)) {
      this.next = this.text.indexOf(this.char, from);
      this.searchedFrom = from;
    }
    return this.next >= 0 && this.next < end ? this.next : -1;
  }
}

/** The finders one scan of a comment shares. */
export interface HtmlFinders {
  lt: CharFinder;
  tick: CharFinder;
}

export function htmlFinders(text: string): HtmlFinders {
  return { lt: new CharFinder(text, "<"), tick: new CharFinder(text, "`") };
}

/** True when `text` has the ASCII word `word` at `at`, in any case, followed by a tag-name boundary. */
function tagAt(text: string, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i += 1) {
    if ((text.charCodeAt(at + i) | 0x20) !== word.charCodeAt(i)) return false;
  }
  const next = text.charCodeAt(at + word.length);
  // Whitespace, ">", "/" or the end of the text end a tag name.
  return Number.isNaN(next) || next === 0x3e || next === 0x2f || next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d;
}

function afterMatch(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  return match ? match.index + match[0].length : Infinity;
}

function afterDetails(text: string, from: number): number {
  let depth = 1;
  DETAILS_TAG.lastIndex = from;
  for (let match = DETAILS_TAG.exec(text); match; match = DETAILS_TAG.exec(text)) {
    depth += match[1] === "/" ? -1 : 1;
    if (depth === 0) {
      const close = text.indexOf(">", match.index);
      return close < 0 ? text.length : close + 1;
    }
  }
  return Infinity;
}

/** Where the hidden region opened by the `<` at `at` ends (exclusive; Infinity: never), or -1 when none opens there. */
function regionFrom(text: string, at: number): number {
  if (text.startsWith("<!--", at)) {
    const close = text.indexOf("-->", at + 4);
    return close < 0 ? Infinity : close + 3;
  }
  for (const tag of RAW_TAGS) if (tagAt(text, at + 1, tag)) return afterMatch(CLOSERS[tag], text, at + 1);
  if (tagAt(text, at + 1, "details")) return afterDetails(text, at + 1);
  return -1;
}

/** The code spans of the line `[start, end)`, as `[from, to)` pairs, for a line that holds backticks. */
function codeSpans(text: string, start: number, end: number): number[] {
  const runs: Array<{ at: number; length: number }> = [];
  for (let i = start; i < end;) {
    if (text.charCodeAt(i) !== 0x60) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < end && text.charCodeAt(j) === 0x60) j += 1;
    runs.push({ at: i, length: j - i });
    i = j;
  }
  // For each run, the next run of the same length (which closes it), found in one pass from the right.
  const next = new Array<number>(runs.length).fill(-1);
  const lastOfLength = new Map<number, number>();
  for (let k = runs.length - 1; k >= 0; k -= 1) {
    const run = runs[k];
    if (!run) continue;
    next[k] = lastOfLength.get(run.length) ?? -1;
    lastOfLength.set(run.length, k);
  }
  const spans: number[] = [];
  for (let k = 0; k < runs.length;) {
    const close = next[k] ?? -1;
    const open = runs[k];
    const closing = close >= 0 ? runs[close] : undefined;
    if (!open || !closing) {
      k += 1;
      continue;
    }
    spans.push(open.at, closing.at + closing.length);
    k = close + 1;
  }
  return spans;
}

/**
 * Scans `[from, end)` of one line for hidden regions; returns where the last one that opens on
 * the line ends (it may lie past the line: the following lines are hidden up to it), or -1.
 */
export function hiddenRegionEnd(text: string, from: number, end: number, finders: HtmlFinders = htmlFinders(text)): number {
  let found = -1;
  let spans: number[] | undefined;
  let span = 0;
  for (let at = finders.lt.within(from, end); at >= 0; at = finders.lt.within(at + 1, end)) {
    spans ??= finders.tick.within(from, end) >= 0 ? codeSpans(text, from, end) : [];
    while (span < spans.length && (spans[span + 1] ?? 0) <= at) span += 2;
    if (span < spans.length && (spans[span] ?? Infinity) <= at) continue;
    const close = regionFrom(text, at);
    if (close < 0) continue;
    found = close;
    if (close >= end) break;
    at = close - 1;
  }
  return found;
}
