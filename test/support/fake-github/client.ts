import { ProbotOctokit } from "probot";
import type { FakeGitHub } from "./fake.js";

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * An Octokit exactly like the App's (Probot's), pointed at the fake; silent, no retries.
 * Authenticates as the App (JWT) by default, as the installation with `installation: true`
 * (Probot's own token flow), or with a given `token`.
 */
export function fakeOctokit(gh: FakeGitHub, auth: { installation?: boolean; token?: string } = {}): InstanceType<typeof ProbotOctokit> {
  const common = { baseUrl: gh.apiUrl, log: silent, retry: { enabled: false }, throttle: { enabled: false } };
  if (auth.token !== undefined) return new ProbotOctokit({ ...common, auth: { token: auth.token } });
  const appAuth = { appId: gh.appId, privateKey: gh.privateKey };
  return new ProbotOctokit({ ...common, auth: auth.installation ? { ...appAuth, installationId: gh.installationId } : appAuth });
}
