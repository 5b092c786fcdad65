/**
 * GitHub's size limits and the truncation that respects them. A check run's summary and text
 * are each limited to 65,535 bytes of UTF-8 (GitHub answers 422 past it); a comment body to
 * 65,536 characters. Truncation never splits a character and never leaves a code fence open.
 */
import { openFenceAtEnd } from "../text/index.js";

/** The longest suffix of a text within a byte budget, on a character boundary (shared with exec's tails). */
export { keepLastBytes } from "../exec/index.js";

export const CHECK_RUN_OUTPUT_MAX_BYTES = 65_535;
export const COMMENT_MAX_CHARS = 65_536;
/** What a truncated text ends with. */
export const TRUNCATION_NOTE = "… truncated";

/** Bytes of `text` in UTF-8. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The longest prefix of `text` that fits `maxBytes` of UTF-8, ending on a character boundary. */
export function truncateToBytes(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  let end = Math.max(0, maxBytes);
  // A continuation byte at the cut means the character before it would be split: drop it whole.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString("utf8");
}

/** The longest prefix of `text` with at most `maxChars` UTF-16 units, never half a surrogate pair. */
export function truncateToChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** How a limit is counted. */
export interface Limit {
  unit: "bytes" | "chars";
  max: number;
}

export const CHECK_RUN_LIMIT: Limit = { unit: "bytes", max: CHECK_RUN_OUTPUT_MAX_BYTES };
export const COMMENT_LIMIT: Limit = { unit: "chars", max: COMMENT_MAX_CHARS };

function measure(text: string, limit: Limit): number {
  return limit.unit === "bytes" ? utf8Bytes(text) : text.length;
}

function cut(text: string, size: number, limit: Limit): string {
  return limit.unit === "bytes" ? truncateToBytes(text, size) : truncateToChars(text, size);
}

/**
 * Bounds Markdown to `limit`. When it is too long the start is kept, an open code fence is
 * closed, and {@link TRUNCATION_NOTE} is appended; the result always fits.
 */
export function boundMarkdown(markdown: string, limit: Limit): string {
  if (measure(markdown, limit) <= limit.max) return markdown;
  let budget = limit.max;
  // The closing fence's length depends on where the cut lands, so shrink until the whole fits.
  for (;;) {
    const kept = cut(markdown, Math.max(0, budget - 64), limit);
    const fence = openFenceAtEnd(kept);
    const closing = fence ? `\n${fence.char.repeat(fence.length)}` : "";
    const result = `${kept}${closing}\n\n${TRUNCATION_NOTE}`;
    const size = measure(result, limit);
    if (size <= limit.max) return result;
    budget -= size - limit.max;
  }
}

/** Bounds a check run's summary or text to GitHub's byte limit. */
export function boundCheckRunOutput(markdown: string): string {
  return boundMarkdown(markdown, CHECK_RUN_LIMIT);
}

/** Bounds a comment body to GitHub's character limit. */
export function boundComment(markdown: string): string {
  return boundMarkdown(markdown, COMMENT_LIMIT);
}
