/**
 * Removes credentials from text before it is posted to GitHub: output tails of repository
 * code may echo tokens, remotes with credentials, or authorization headers.
 */

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

/**
 * Returns `text` with GitHub tokens (`ghs_`, `ghp_`, `gho_`, `ghu_`, `ghr_`, `github_pat_`),
 * `x-access-token:…@` and other URL credentials, `Authorization:` values, `Bearer` and `Basic`
 * credentials, and every given secret value (at least {@link MIN_SECRET_LENGTH} characters),
 * plain or base64-encoded as git's Basic header carries it, replaced.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = text;
  // Longest first, so a secret that contains another is removed whole.
  // A token also travels base64-encoded in git's Basic authorization header.
  const forms = secrets.flatMap((value) => [value, Buffer.from(value).toString("base64"), Buffer.from(`x-access-token:${value}`).toString("base64")]);
  const values = forms.filter((value) => value.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const value of values) result = result.split(value).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) result = result.replace(pattern, replacement);
  return result;
}
