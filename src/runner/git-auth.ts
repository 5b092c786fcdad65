/**
 * Git authentication with an installation token, passed only through the environment of the
 * git process (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`): never in argv,
 * where `ps` shows it, and never in `.git/config`, where repository code could read it.
 */

/** The env values that make git send `Authorization: Basic x-access-token:<token>` over HTTPS. */
export function gitAuthEnv(token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}

/** Every form a token can take in text we print: itself and its Basic-auth encoding. */
export function tokenForms(token: string): string[] {
  return [token, Buffer.from(`x-access-token:${token}`).toString("base64")];
}

/** Replaces every form of the token in `text`. */
export function redactToken(text: string, token: string | undefined): string {
  if (!token) return text;
  let result = text;
  for (const form of tokenForms(token)) result = result.split(form).join("[REDACTED]");
  return result;
}
