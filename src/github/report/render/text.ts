/**
 * Untrusted text (issue titles and bodies, agents' findings) made safe for what the App writes:
 * single-lined where a line break would change meaning (commit messages, branch-facing titles),
 * and rendered as text in Markdown the App posts — no mention, team ping, issue reference,
 * image, link, autolink or HTML survives.
 */

/** GitHub refuses issue and pull request titles longer than this. */
export const TITLE_MAX_CHARS = 256;

const ZERO_WIDTH_SPACE = "\u200b";
// Every line terminator Unicode and git know, and the other control characters.
// eslint-disable-next-line no-control-regex
const BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * One line: line breaks and control characters become spaces, runs of whitespace one space,
 * trimmed and cut to `maxChars` (never half a surrogate pair).
 */
export function singleLine(text: string, maxChars = TITLE_MAX_CHARS): string {
  const line = text.replace(BREAKS_AND_CONTROLS, " ").replace(/\s+/g, " ").trim();
  if (line.length <= maxChars) return line;
  const last = line.charCodeAt(maxChars - 1);
  return line.slice(0, last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars);
}

// Markdown punctuation that starts emphasis, code, links, images, HTML, entities or tables.
const MARKDOWN_PUNCTUATION = /[\\`*_{}[\]()<>!|~&#]/g;

/**
 * `text` as literal Markdown text: punctuation escaped, and a zero-width space after `@`
 * (mentions, `@org/team`), `#` (issue references), `://` and `www.` (autolinks), which
 * GitHub resolves in rendered text whatever the escaping.
 */
export function neutralise(text: string): string {
  return text
    .replace(MARKDOWN_PUNCTUATION, (char) => `\\${char}`)
    .replace(/@/g, `@${ZERO_WIDTH_SPACE}`)
    .replace(/#/g, `#${ZERO_WIDTH_SPACE}`)
    .replace(/:\/\//g, `:${ZERO_WIDTH_SPACE}//`)
    .replace(/\bwww\./gi, (www) => `${www.slice(0, 3)}${ZERO_WIDTH_SPACE}.`);
}

/** A single-lined, neutralised line of untrusted text. */
export function untrustedLine(text: string, maxChars = TITLE_MAX_CHARS): string {
  return neutralise(singleLine(text, maxChars));
}

/**
 * A table cell of untrusted text (a plan's task title): one line, neutralised, its pipes
 * escaped (by {@link neutralise}), so it can neither end its cell nor render as anything but text.
 */
export function untrustedCell(text: string, maxChars = TITLE_MAX_CHARS): string {
  return untrustedLine(text, maxChars);
}
