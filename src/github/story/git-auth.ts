/**
 * Git authentication with an installation token, passed only through the environment of the
 * git process (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`): never in argv,
 * where `ps` shows it, and never in `.git/config`, where repository code could read it. The
 * Basic header's encoding of the token is one of the forms `redactSecrets` removes.
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
