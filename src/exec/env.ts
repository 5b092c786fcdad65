/**
 * The environment of a child process is built from an allowlist: nothing the harness holds
 * reaches repository code or an agent unless a caller names it.
 */

/** Names every child receives when the harness has them: enough for tools to find themselves. */
export const BASE_ENV_ALLOWLIST: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TERM",
  "TMPDIR",
];

/**
 * The App's own credentials. They never reach a child, even when a caller or an operator's
 * configuration names them.
 */
export const NEVER_PASSED: ReadonlySet<string> = new Set([
  "PRIVATE_KEY",
  "PRIVATE_KEY_PATH",
  "WEBHOOK_SECRET",
  "GITHUB_CLIENT_SECRET",
  "GITHUB_CLIENT_ID",
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "GITHUB_PAT",
  "APP_ID",
  "WEBHOOK_PROXY_URL",
  "REDIS_URL",
  "HARNESS_STATUS_TOKEN",
]);

/** What a caller adds to the base allowlist. */
export interface EnvSpec {
  /** Extra names copied from the source environment when present. */
  allow?: readonly string[];
  /** Values set explicitly (they win over copied ones). */
  set?: Readonly<Record<string, string>>;
}

/** True when a name is one of the App's own credentials. */
export function isNeverPassed(name: string): boolean {
  return NEVER_PASSED.has(name.toUpperCase());
}

/**
 * Builds a child's environment from `source` (the harness's own environment by default):
 * the base allowlist, the caller's extra names, then explicit values. Credentials in
 * {@link NEVER_PASSED} are dropped whichever way they were asked for.
 */
export function buildChildEnv(spec: EnvSpec = {}, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  // Stryker disable next-line ArrayDeclaration: equivalent, a name absent from the source is never copied.
  for (const name of [...BASE_ENV_ALLOWLIST, ...(spec.allow ?? [])]) {
    const value = source[name];
    if (value !== undefined && !isNeverPassed(name)) env[name] = value;
  }
  for (const [name, value] of Object.entries(spec.set ?? {})) {
    if (!isNeverPassed(name)) env[name] = value;
  }
  return env;
}
