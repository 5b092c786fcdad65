/**
 * CommonMark fenced-code-block rules shared by the command parser (commands inside a fence
 * are not commands) and the truncation of Markdown (a cut inside a fence must close it).
 * Lines are addressed as `[start, end)` ranges of one text, so a scan allocates nothing per
 * line and stays linear in the input.
 */

/** An open fenced code block: its character, the length of its opening run, and the first word of its info string. */
export interface Fence {
  char: "`" | "~";
  length: number;
  info: string;
}

const SPACE = 0x20;
const TAB = 0x09;

/** Leading spaces of the line `[start, end)`, or -1 when its indentation holds a tab (a tab reaches column 4). */
export function leadingSpaces(text: string, start = 0, end = text.length): number {
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === SPACE) i += 1;
    else if (c === TAB) return -1;
    else break;
  }
  return i - start;
}

function runEnd(text: string, from: number, end: number, char: number): number {
  let i = from;
  while (i < end && text.charCodeAt(i) === char) i += 1;
  return i;
}

/** True when `[from, end)` holds only spaces, tabs or a carriage return. */
export function onlySpaces(text: string, from: number, end: number): boolean {
  for (let i = from; i < end; i += 1) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== 0x0d) return false;
  }
  return true;
}

/** The fence the line `[start, end)` opens, or undefined: at most 3 spaces, then 3+ backticks or tildes. */
export function openingFence(text: string, start = 0, end = text.length): Fence | undefined {
  const indent = leadingSpaces(text, start, end);
  if (indent < 0 || indent > 3) return undefined;
  const at = start + indent;
  const code = text.charCodeAt(at);
  if (code !== 0x60 && code !== 0x7e) return undefined;
  const after = runEnd(text, at, end, code);
  const length = after - at;
  if (length < 3) return undefined;
  // A backtick fence's info string may not contain a backtick (the line would be inline code).
  if (code === 0x60) {
    for (let i = after; i < end; i += 1) if (text.charCodeAt(i) === 0x60) return undefined;
  }
  return { char: code === 0x60 ? "`" : "~", length, info: text.slice(after, end).trim().split(/\s/, 1)[0] ?? "" };
}

/** True when the line `[start, end)` closes `fence`: same character, at least as long, nothing but spaces after. */
export function closesFence(text: string, fence: Fence, start = 0, end = text.length): boolean {
  const indent = leadingSpaces(text, start, end);
  if (indent < 0 || indent > 3) return false;
  const at = start + indent;
  const code = fence.char.charCodeAt(0);
  if (text.charCodeAt(at) !== code) return false;
  const after = runEnd(text, at, end, code);
  return after - at >= fence.length && onlySpaces(text, after, end);
}

/** Calls `visit(start, end)` for each line of `text` (without its `\n`) until it answers false. */
export function forEachLine(text: string, visit: (start: number, end: number) => boolean): void {
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    if (!visit(start, end)) return;
    start = end + 1;
  }
}

/** A fenced block of `markdown`: its fence and its lines; `closed` false for one that runs to the end of the text. */
export interface FencedBlock {
  fence: Fence;
  body: string;
  closed: boolean;
}

/** Every fenced code block of `markdown`, in order (CommonMark's rules, as {@link openingFence} and {@link closesFence} read them). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: { fence: Fence; from: number; to: number } | undefined;
  forEachLine(markdown, (start, end) => {
    if (!open) {
      const fence = openingFence(markdown, start, end);
      if (fence) open = { fence, from: end + 1, to: end + 1 };
    } else if (closesFence(markdown, open.fence, start, end)) {
      blocks.push({ fence: open.fence, body: bodyOf(markdown, open.from, open.to), closed: true });
      open = undefined;
    } else {
      open.to = end + 1;
    }
    return true;
  });
  if (open) blocks.push({ fence: open.fence, body: bodyOf(markdown, open.from, open.to), closed: false });
  return blocks;
}

/** The lines `[from, to)` without their final line break, and without the `\r` of CRLF line ends. */
function bodyOf(markdown: string, from: number, to: number): string {
  return markdown
    .slice(from, Math.min(to, markdown.length))
    .replace(/\r?\n$/, "")
    .replace(/\r\n/g, "\n");
}

/** The fence left open at the end of `markdown`, if any. */
export function openFenceAtEnd(markdown: string): Fence | undefined {
  let fence: Fence | undefined;
  forEachLine(markdown, (start, end) => {
    if (fence) {
      if (closesFence(markdown, fence, start, end)) fence = undefined;
    } else {
      fence = openingFence(markdown, start, end);
    }
    return true;
  });
  return fence;
}
