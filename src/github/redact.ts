/**
 * Removes credentials from text before it is posted to GitHub: output tails of repository
 * code may echo tokens, remotes with credentials, or authorization headers.
 */

import { secretForms } from "./secret-forms.js";

/** What a removed secret is replaced with. */
export const REDACTED = "[REDACTED]";

/** Values shorter than this are not redacted by value: replacing them would shred the text. */
export const MIN_SECRET_LENGTH = 4;

// Each pattern is a plain run over a character class, so matching is linear.
const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\bgh[opsur]_[A-Za-z0-9]{16,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{16,}/g, REDACTED],
  [/x-access-token:[^@\s]{0,1024}@/gi, `x-access-token:${REDACTED}@`],
  // Credentials in any URL (scheme://user:password@host); anchored on "://" and bounded, so a
  // long line without a match is not rescanned from every position.
  [/:\/\/([^\s:/@]{0,256}):[^\s@/]{1,1024}@/g, `://$1:${REDACTED}@`],
  [/(\bauthorization\s*[:=]\s*)[^\r\n]+/gi, `$1${REDACTED}`],
  [/(\bbearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${REDACTED}`],
  [/(\bbasic\s+)[A-Za-z0-9+/]{16,}={0,2}/gi, `$1${REDACTED}`],
  [/(\btoken\s+)(gh[opsur]_|github_pat_)?[A-Za-z0-9._-]{20,}/gi, `$1${REDACTED}`],
];

/** Replaces every PEM block (`-----BEGIN …-----` to `-----END …-----`), and the part of one cut by a tail's start or end. */
export function redactPem(text: string): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: a fast path; the functions below return a text without "-----" unchanged
  if (!text.includes("-----")) return text;
  const whole = text.replace(PEM_BLOCK, REDACTED);
  // A block whose end was cut off: its header and the base64 lines after it; then one whose start was.
  return removeBase64LinesBefore(removeHeaders(whole));
}

// Bounded, so an opened block that never ends is not rescanned from every later header.
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]{1,64}-----[\s\S]{0,16384}?-----END [A-Z0-9 ]{1,64}-----/g;
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{1,64}-----/g;
const PEM_END = "-----END ";

function isBase64Char(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2f || code === 0x3d;
}

/** Where the run of base64-only lines starting at `from` (after a line break) ends. */
function skipBase64Lines(text: string, from: number): number {
  let at = from;
  for (;;) {
    let i = at;
    if (text.charCodeAt(i) === 0x0d) i += 1;
    if (text.charCodeAt(i) !== 0x0a) return at;
    i += 1;
    const lineStart = i;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: past the end charCodeAt is NaN, which isBase64Char refuses; the bound says so
    while (i < text.length && isBase64Char(text.charCodeAt(i))) i += 1;
    if (i === lineStart || (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d)) return at;
    at = i;
  }
}

function removeHeaders(text: string): string {
  let out = "";
  let from = 0;
  PEM_BEGIN.lastIndex = 0;
  for (let match = PEM_BEGIN.exec(text); match; match = PEM_BEGIN.exec(text)) {
    out += `${text.slice(from, match.index)}${REDACTED}`;
    from = skipBase64Lines(text, match.index + match[0].length);
    PEM_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}

function removeBase64LinesBefore(text: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf(PEM_END, from); at >= 0; at = text.indexOf(PEM_END, from)) {
    // Walk back over whole base64 lines that end right before the footer.
    let start = at;
    for (;;) {
      let lineEnd = start - 1;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: `from` follows a footer ("-----" or "-----END "), never a line break, so the next check stops there too; the bound says so
      if (lineEnd < from) break;
      if (text.charCodeAt(lineEnd) !== 0x0a) break;
      if (text.charCodeAt(lineEnd - 1) === 0x0d) lineEnd -= 1;
      let i = lineEnd;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the character before `from` ends a footer or is before the text (NaN): never base64, so the walk stops there anyway
      while (i > from && isBase64Char(text.charCodeAt(i - 1))) i -= 1;
      if (i === lineEnd || (i > from && text.charCodeAt(i - 1) !== 0x0a)) break;
      start = i;
    }
    const close = text.indexOf("-----", at + PEM_END.length);
    // Stryker disable next-line EqualityOperator: a found close is past `at`, so never 0; 80 is a generous bound on a footer (its name is at most 64 characters), not an edge
    const end = close >= 0 && close - at < 80 ? close + 5 : at + PEM_END.length;
    out += `${text.slice(from, start)}${REDACTED}`;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * Returns `text` with GitHub tokens (`ghs_`, `ghp_`, `gho_`, `ghu_`, `ghr_`, `github_pat_`),
 * `x-access-token:…@` and other URL credentials, `Authorization:` values, `Bearer` and `Basic`
 * credentials, PEM blocks (private keys), and every given secret value (at least
 * {@link MIN_SECRET_LENGTH} characters) in each of its forms — plain, URL-encoded, hex, base64,
 * base64url, git's Basic header — replaced. `secrets` is read on every call, so a list the
 * caller keeps appending to (tokens refreshed during a story) is redacted as it stands.
 */
// Stryker disable next-line ArrayDeclaration: the default is "no values"; a mutant's default differs only for a text holding Stryker's own placeholder
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = redactPem(text);
  const values = secrets.filter((value) => value.length >= MIN_SECRET_LENGTH).flatMap((value) => secretForms(value));
  // Longest first, so a secret that contains another is removed whole.
  values.sort((a, b) => b.length - a.length);
  // Stryker disable next-line ConditionalExpression: a fast path; splitting a text on a value it lacks returns it unchanged
  for (const value of values) if (result.includes(value)) result = result.split(value).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) result = result.replace(pattern, replacement);
  return result;
}
