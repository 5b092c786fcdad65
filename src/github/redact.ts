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

/**
 * The length of the line break at `at`: a real one (`\n`, `\r\n`) or one written as escapes
 * (`\\n`, `\\r\\n`, as a key printed inside JSON or a quoted string shows it); 0 when none.
 */
function breakAt(text: string, at: number): number {
  if (text.charCodeAt(at) === 0x0a) return 1;
  if (text.charCodeAt(at) === 0x0d && text.charCodeAt(at + 1) === 0x0a) return 2;
  if (text.charCodeAt(at) !== 0x5c) return 0;
  if (text.charCodeAt(at + 1) === 0x6e) return 2;
  return text.charCodeAt(at + 1) === 0x72 && text.charCodeAt(at + 2) === 0x5c && text.charCodeAt(at + 3) === 0x6e ? 4 : 0;
}

/** The length of the line break that ends right before `at` (see {@link breakAt}); 0 when none. */
function breakBefore(text: string, at: number): number {
  if (text.charCodeAt(at - 1) === 0x0a) return text.charCodeAt(at - 2) === 0x0d ? 2 : 1;
  if (text.charCodeAt(at - 1) !== 0x6e || text.charCodeAt(at - 2) !== 0x5c) return 0;
  return text.charCodeAt(at - 3) === 0x72 && text.charCodeAt(at - 4) === 0x5c ? 4 : 2;
}

/**
 * Where breaks are escapes, a key's first or last line starts or ends at a quote, not at a
 * break: a base64 run this long is taken for key material there (a key line has 64).
 */
const ESCAPED_KEY_RUN = 16;

/** A base64 character that does not end an escaped line break (the `n` of `\\n`). */
function isBase64Before(text: string, at: number): boolean {
  return isBase64Char(text.charCodeAt(at - 1)) && breakBefore(text, at) === 0;
}

/** Where the run of base64-only lines starting at `from` (after a line break) ends. */
function skipBase64Lines(text: string, from: number): number {
  let at = from;
  for (;;) {
    const step = breakAt(text, at);
    if (step === 0) return at;
    let i = at + step;
    const lineStart = i;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: past the end charCodeAt is NaN, which isBase64Char refuses; the bound says so
    while (i < text.length && isBase64Char(text.charCodeAt(i))) i += 1;
    if (i === lineStart) return at;
    if (i < text.length && breakAt(text, i) === 0) {
      // A quoted key's last line ends at the quote: with escaped breaks, a long run is still key.
      return text.charCodeAt(at) === 0x5c && i - lineStart >= ESCAPED_KEY_RUN ? i : at;
    }
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
      const step = breakBefore(text, start);
      if (step === 0) break;
      lineEnd = start - step;
      let i = lineEnd;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the character before `from` ends a footer or is before the text (NaN): never base64, so the walk stops there anyway
      while (i > from && isBase64Before(text, i)) i -= 1;
      if (i === lineEnd) break;
      if (i > from && breakBefore(text, i) === 0) {
        // A quoted key's first line starts after the quote: with escaped breaks, a long run is still key.
        if (text.charCodeAt(lineEnd) === 0x5c && lineEnd - i >= ESCAPED_KEY_RUN) start = i;
        break;
      }
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
