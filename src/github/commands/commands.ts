/**
 * Slash commands in issue and pull-request comments: `/harness retry-blocked`,
 * `/harness accept-integrity` and `/harness help`, at the start of a line (up to 3 spaces of indentation) of a plain paragraph:
 * outside fenced and indented code, block quotes, HTML (blocks, comments, `<pre>`, `<details>`),
 * headings and tables. One pass over the text by index, no backtracking regular expression;
 * stops after a fixed number of commands.
 */
import { closesFence, forEachLine, leadingSpaces, onlySpaces, openingFence, type Fence } from "../../text/index.js";
import { CharFinder, hiddenRegionEnd, htmlFinders } from "./hidden-html.js";

/** The commands the App understands, in the order the help lists them. */
export const KNOWN_COMMANDS = ["retry-blocked", "revise", "accept-integrity", "help"] as const;
export type KnownCommand = (typeof KNOWN_COMMANDS)[number];

/** One command found in a comment; `line` is 1-based. `revise` carries its text: the rest of its line and the lines after it. */
export type HarnessCommand =
  { kind: Exclude<KnownCommand, "revise">; line: number } | { kind: "revise"; line: number; text: string } | { kind: "unknown"; name: string; line: number };

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
 * reply can list what exists. Only a line of a plain paragraph counts: not code, not a quote,
 * not HTML (a block, `<pre>`, `<details>`, a comment), not a heading or a table row.
 */
export function parseCommands(body: string, options: ParseOptions = {}): HarnessCommand[] {
  const maxCommands = options.maxCommands ?? MAX_COMMANDS;
  const maxChars = options.maxChars ?? MAX_COMMENT_CHARS;
  const text = body.length > maxChars ? body.slice(0, maxChars) : body;
  const found: HarnessCommand[] = [];
  // Commands of the paragraph being read: a setext underline or a table delimiter row after it
  // turns its lines into a heading or a table header, which are not commands.
  let pending: HarnessCommand[] = [];
  const commit = (): void => {
    for (const command of pending) found.push(command);
    pending = [];
  };
  let fence: Fence | undefined;
  // Where the open hidden region (HTML comment, <pre>, <details>, …) ends; Infinity: never closed.
  let hiddenUntil = -1;
  // Raw HTML and table rows run to the next blank line.
  let htmlBlock = false;
  let table = false;
  let paragraph = false;
  let previousHadPipe = false;
  // A paragraph inside a block quote swallows the following non-blank lines ("lazy continuation").
  let quoteParagraph = false;
  let lineNumber = 0;
  const finders = htmlFinders(text);
  const pipes = new CharFinder(text, "|");
  const scanHidden = (from: number, end: number): void => {
    const close = hiddenRegionEnd(text, from, end, finders);
    if (close >= 0) hiddenUntil = close;
  };
  forEachLine(text, (start, end) => {
    lineNumber += 1;
    if (fence) {
      if (closesFence(text, fence, start, end)) fence = undefined;
      return true;
    }
    if (hiddenUntil > start) {
      if (hiddenUntil < end) scanHidden(hiddenUntil, end);
      return true;
    }
    if (onlySpaces(text, start, end)) {
      commit();
      quoteParagraph = htmlBlock = table = paragraph = false;
      return found.length < maxCommands;
    }
    if (htmlBlock || table) {
      scanHidden(start, end);
      return true;
    }
    const indent = leadingSpaces(text, start, end);
    const at = start + indent;
    const flush = indent >= 0 && indent <= 3;
    if (flush && text.charCodeAt(at) === 0x3e /* > */) {
      commit();
      paragraph = false;
      quoteParagraph = !onlySpaces(text, at + 1, end);
      scanHidden(at + 1, end);
      return true;
    }
    if (quoteParagraph) {
      scanHidden(start, end);
      return true;
    }
    const opened = openingFence(text, start, end);
    if (opened) {
      commit();
      paragraph = false;
      fence = opened;
      return true;
    }
    if (!flush) {
      if (paragraph) scanHidden(start, end);
      return true;
    }
    if (paragraph && isSetextUnderline(text, at, end)) {
      pending = [];
      paragraph = false;
      return true;
    }
    if (paragraph && previousHadPipe && isTableDelimiterRow(text, at, end)) {
      const header = lineNumber - 1;
      pending = pending.filter((command) => command.line !== header);
      commit();
      table = true;
      paragraph = false;
      return true;
    }
    if (startsHtmlBlock(text, at, end)) {
      commit();
      paragraph = false;
      scanHidden(at, end);
      // A comment or <pre>-like block ends with its closer (the hidden region); other HTML at a blank line.
      htmlBlock = hiddenUntil <= at || !endsAtCloser(text, at);
      return true;
    }
    const command = commandAt(text, at, end, lineNumber);
    if (command) pending.push(command);
    paragraph = true;
    previousHadPipe = pipes.within(at, end) >= 0;
    scanHidden(at, end);
    return found.length + pending.length < maxCommands;
  });
  commit();
  return found.slice(0, maxCommands);
}

/** `<` then a tag name, `/`, `!` or `?`: a line GitHub renders as raw HTML up to the next blank line. */
function startsHtmlBlock(text: string, at: number, end: number): boolean {
  if (text.charCodeAt(at) !== 0x3c || at + 1 >= end) return false;
  const next = text.charCodeAt(at + 1) | 0x20;
  const c = text.charCodeAt(at + 1);
  return (next >= 0x61 && next <= 0x7a) || c === 0x2f || c === 0x21 || c === 0x3f;
}

/** `<!--`, `<pre`, `<script`, `<style`, `<textarea`: HTML blocks that end on the line of their closer. */
function endsAtCloser(text: string, at: number): boolean {
  return text.startsWith("<!--", at) || /^<(?:pre|script|style|textarea)(?=[\s>]|$)/i.test(text.slice(at, at + 12));
}

/** A run of `=` or of `-` and nothing but spaces after it. */
function isSetextUnderline(text: string, at: number, end: number): boolean {
  const char = text.charCodeAt(at);
  if (char !== 0x3d && char !== 0x2d) return false;
  let i = at;
  while (i < end && text.charCodeAt(i) === char) i += 1;
  return onlySpaces(text, i, end);
}

/** `| --- | :-: |` and the like: only pipes, dashes, colons and spaces, with a pipe and a dash. */
function isTableDelimiterRow(text: string, at: number, end: number): boolean {
  let pipe = false;
  let dash = false;
  for (let i = at; i < end; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x7c) pipe = true;
    else if (c === 0x2d) dash = true;
    else if (c !== 0x3a && c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return pipe && dash;
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
  // The revision's instructions: the rest of the comment from after the command's name (a writer's words, frozen with the job).
  if (known === "revise") return { kind: known, line: lineNumber, text: text.slice(j).trim() };
  if (known) return { kind: known, line: lineNumber };
  return { kind: "unknown", name: name.slice(0, MAX_NAME_CHARS), line: lineNumber };
}
