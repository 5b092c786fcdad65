/**
 * Slash commands in issue and pull-request comments: `/harness retry-blocked` and
 * `/harness help`, at the start of a line (up to 3 spaces of indentation), outside fenced
 * code, indented code, block quotes and HTML comments. The scan is one pass over the lines
 * without backtracking regular expressions, and stops after a fixed number of commands.
 */
import { closesFence, leadingSpaces, openingFence, type Fence } from "./fences.js";

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
  let inHtmlComment = false;
  // A paragraph inside a block quote swallows the following non-blank lines ("lazy continuation").
  let quoteParagraph = false;
  let lineNumber = 0;
  let start = 0;
  while (start <= text.length && found.length < maxCommands) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end);
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    start = end + 1;
    lineNumber += 1;
    if (fence) {
      if (closesFence(line, fence)) fence = undefined;
      continue;
    }
    if (inHtmlComment) {
      if (line.includes("-->")) inHtmlComment = false;
      continue;
    }
    const indent = leadingSpaces(line);
    const blank = line.trim() === "";
    if (blank) {
      quoteParagraph = false;
      continue;
    }
    if (indent >= 0 && indent <= 3 && line[indent] === ">") {
      quoteParagraph = line.slice(indent + 1).trim() !== "";
      continue;
    }
    if (quoteParagraph) continue;
    const opened = openingFence(line);
    if (opened) {
      fence = opened;
      continue;
    }
    if (indent >= 0 && indent <= 3 && line.startsWith("<!--", indent)) {
      inHtmlComment = !line.includes("-->", indent + 4);
      continue;
    }
    if (indent < 0 || indent > 3) continue;
    const command = commandAt(line, indent, lineNumber);
    if (command) found.push(command);
  }
  return found;
}

function isSpace(char: string | undefined): boolean {
  return char === " " || char === "\t";
}

function commandAt(line: string, indent: number, lineNumber: number): HarnessCommand | undefined {
  if (!line.startsWith(PREFIX, indent)) return undefined;
  let i = indent + PREFIX.length;
  if (i < line.length && !isSpace(line[i])) return undefined; // "/harnessx" is not ours
  while (isSpace(line[i])) i += 1;
  let j = i;
  while (j < line.length && !isSpace(line[j]) && j - i <= MAX_NAME_CHARS) j += 1;
  const name = line.slice(i, j);
  if (name === "") return { kind: "help", line: lineNumber };
  const known = KNOWN_COMMANDS.find((candidate) => candidate === name);
  if (known) return { kind: known, line: lineNumber };
  return { kind: "unknown", name: name.slice(0, MAX_NAME_CHARS), line: lineNumber };
}
