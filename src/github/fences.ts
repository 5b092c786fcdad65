/**
 * CommonMark fenced-code-block rules shared by the command parser (commands inside a fence
 * are not commands) and the truncation of Markdown (a cut inside a fence must close it).
 * Line-based and free of backtracking, so scanning stays linear in the input.
 */

/** An open fenced code block: its character and the length of its opening run. */
export interface Fence {
  char: "`" | "~";
  length: number;
}

/** Number of leading spaces, or -1 when the indentation holds a tab (a tab reaches column 4). */
export function leadingSpaces(line: string): number {
  let i = 0;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 0x20) i += 1;
    else if (c === 0x09) return -1;
    else break;
  }
  return i;
}

function runLength(line: string, from: number, char: string): number {
  let i = from;
  while (i < line.length && line[i] === char) i += 1;
  return i - from;
}

/** The fence a line opens, or undefined. At most 3 spaces of indentation, 3+ backticks or tildes. */
export function openingFence(line: string): Fence | undefined {
  const indent = leadingSpaces(line);
  if (indent < 0 || indent > 3) return undefined;
  const char = line[indent];
  if (char !== "`" && char !== "~") return undefined;
  const length = runLength(line, indent, char);
  if (length < 3) return undefined;
  // A backtick fence's info string may not contain a backtick (it would be inline code).
  if (char === "`" && line.indexOf("`", indent + length) >= 0) return undefined;
  return { char, length };
}

/** True when `line` closes `fence`: same character, at least as long, nothing but spaces after. */
export function closesFence(line: string, fence: Fence): boolean {
  const indent = leadingSpaces(line);
  if (indent < 0 || indent > 3) return false;
  if (line[indent] !== fence.char) return false;
  const length = runLength(line, indent, fence.char);
  if (length < fence.length) return false;
  return line.slice(indent + length).trim() === "";
}

/** The fence left open at the end of `markdown`, if any. */
export function openFenceAtEnd(markdown: string): Fence | undefined {
  let fence: Fence | undefined;
  let start = 0;
  while (start <= markdown.length) {
    let end = markdown.indexOf("\n", start);
    if (end < 0) end = markdown.length;
    const line = markdown.slice(start, end).replace(/\r$/, "");
    if (fence) {
      if (closesFence(line, fence)) fence = undefined;
    } else {
      fence = openingFence(line);
    }
    start = end + 1;
  }
  return fence;
}
