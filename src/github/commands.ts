/**
 * Slash commands in issue and pull-request comments: `/harness retry-blocked` and
 * `/harness help`, at the start of a line (up to 3 spaces of indentation), outside fenced
 * code, indented code, block quotes and HTML comments. One pass over the text by index, no
 * per-line allocation and no backtracking regular expression; stops after a fixed number of
 * commands.
 */
import { closesFence, forEachLine, leadingSpaces, onlySpaces, openingFence, type Fence } from "./fences.js";

/** The commands the App understands, in the order the help lists them. */
export const KNOWN_COMMANDS = ["retry-blocked", "help"] as const;
export type KnownCommand = (typeof KNOWN_COMMANDS)[number];

/** One command found in a comment; `line` is 1-based. */
export type HarnessCommand =
  | { kind: KnownCommand; line: number }
  | { kind: "unknown"; name: string; line: number };

/** At most this many commands are taken from one comment. */
export const MAX_COMMANDS = 10;
/** GitHub refuses comments longer than this; text past it cannot be a real comment and is not scanned. */
export const MAX_COMMENT_CHARS = 65_536;

const PREFIX = "/harness";
const MAX_NAME_CHARS = 40;

export interface ParseOptions {
  maxCommands?: number;
  /** Characters scanned; the rest of an oversized body is ignored. */
  maxChars?: number;
}

/**
 * Finds the `/harness` commands in a comment body, in order, at most `maxCommands`.
 * A bare `/harness` is read as `help`; `/harness <other>` is an `unknown` command so the
 * reply can list what exists.
 */
export function parseCommands(body: string, options: ParseOptions = {}): HarnessCommand[] {
  const maxCommands = options.maxCommands ?? MAX_COMMANDS;
  const maxChars = options.maxChars ?? MAX_COMMENT_CHARS;
  const text = body.length > maxChars ? body.slice(0, maxChars) : body;
  const found: HarnessCommand[] = [];
  let fence: Fence | undefined;
  // Where the open HTML comment's "-->" is (Infinity: never closed); found once, so lines inside cost nothing.
  let htmlCommentClose = -1;
  // A paragraph inside a block quote swallows the following non-blank lines ("lazy continuation").
  let quoteParagraph = false;
  let lineNumber = 0;
  forEachLine(text, (start, end) => {
    lineNumber += 1;
    if (fence) {
      if (closesFence(text, fence, start, end)) fence = undefined;
      return true;
    }
    if (htmlCommentClose >= start) {
      if (htmlCommentClose + 3 <= end) htmlCommentClose = -1;
      return true;
    }
    if (onlySpaces(text, start, end)) {
      quoteParagraph = false;
      return true;
    }
    const indent = leadingSpaces(text, start, end);
    const at = start + indent;
    const flush = indent >= 0 && indent <= 3;
    if (flush && text.charCodeAt(at) === 0x3e /* > */) {
      quoteParagraph = !onlySpaces(text, at + 1, end);
      return true;
    }
    if (quoteParagraph) return true;
    const opened = openingFence(text, start, end);
    if (opened) {
      fence = opened;
      return true;
    }
    if (!flush) return true;
    if (text.startsWith("<!--", at)) {
      const close = text.indexOf("-->", at + 4);
      htmlCommentClose = close < 0 ? Infinity : close + 3 <= end ? -1 : close;
      return true;
    }
    const command = commandAt(text, at, end, lineNumber);
    if (command) found.push(command);
    return found.length < maxCommands;
  });
  return found;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d;
}

function commandAt(text: string, at: number, end: number, lineNumber: number): HarnessCommand | undefined {
  if (!text.startsWith(PREFIX, at)) return undefined;
  let i = at + PREFIX.length;
  if (i < end && !isSpace(text.charCodeAt(i))) return undefined; // "/harnessx" is not ours
  while (i < end && isSpace(text.charCodeAt(i))) i += 1;
  let j = i;
  while (j < end && !isSpace(text.charCodeAt(j)) && j - i <= MAX_NAME_CHARS) j += 1;
  if (j === i) return { kind: "help", line: lineNumber };
  const name = text.slice(i, j);
  const known = KNOWN_COMMANDS.find((candidate) => candidate === name);
  if (known) return { kind: known, line: lineNumber };
  return { kind: "unknown", name: name.slice(0, MAX_NAME_CHARS), line: lineNumber };
}
