import type { ProbotOctokit } from "probot";

/** The octokit Probot gives an App: authenticated as the App itself (JWT). */
export type AppOctokit = InstanceType<typeof ProbotOctokit>;

/**
 * What the runner's API token may do for a story: report (checks, issues, pull requests) and
 * read `.github/harness.yml`. Pushing is a separate token's ({@link GIT_TOKEN_PERMISSIONS}).
 */
export const STORY_API_PERMISSIONS: Readonly<Record<string, string>> = {
  checks: "write",
  issues: "write",
  pull_requests: "write",
  contents: "read",
  metadata: "read",
};
/** What the token git fetches and pushes with may do. */
export const GIT_TOKEN_PERMISSIONS: Readonly<Record<string, string>> = { contents: "write", metadata: "read" };

/** Tokens live an hour; one with less than this left is replaced before use. */
const REFRESH_MARGIN_MS = 10 * 60_000;

/** An installation's token, refreshed when it nears expiry, and an octokit that always uses the current one. */
export interface Installation {
  /** The current token (refreshed when it nears expiry). */
  token(): Promise<string>;
  /** Every token this installation handed out, for redaction: the live list, which grows as tokens are refreshed. */
  tokensSeen(): readonly string[];
  octokit: AppOctokit;
}

interface TokenAuthHook {
  (): Promise<{ type: "token"; tokenType: "installation"; token: string }>;
  hook: (request: RequestLike, route: string | object, parameters?: object) => Promise<unknown>;
}
type RequestLike = ((options: object) => Promise<unknown>) & {
  endpoint: { merge: (route: string | object, parameters?: object) => { headers: Record<string, string> } };
};

/**
 * Authenticates as an installation through the App-level octokit's
 * `apps.createInstallationAccessToken`. Deliberately not `context.octokit.auth({ type:
 * "installation" })`: in Probot 14 that path sends its token request to the public API host
 * even when GHE_HOST is set, while requests made through the octokit honour its base URL.
 */
export async function authenticateInstallation(
  appOctokit: AppOctokit,
  installationId: number,
  options: {
    throttle?: boolean;
    /** Octokit's own retries of 5xx (default on); the outbox turns them off, as it retries itself. */
    retry?: boolean;
    now?: () => number;
    /** The repositories the token is minted for (`repository_ids`); all of the installation's when absent. */
    repositoryIds?: readonly number[];
    /** The permissions it holds; the installation's when absent. */
    permissions?: Readonly<Record<string, string>>;
    /** A list every token handed out is appended to as well (one live list for several installations' redaction). */
    seen?: string[];
  } = {},
): Promise<Installation> {
  const now = options.now ?? Date.now;
  const seen: string[] = [];
  let current: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const create = async (): Promise<string> => {
    const response = await appOctokit.rest.apps.createInstallationAccessToken({
      installation_id: installationId,
      ...(options.repositoryIds ? { repository_ids: [...options.repositoryIds] } : {}),
      ...(options.permissions ? { permissions: { ...options.permissions } } : {}),
    });
    current = { token: response.data.token, expiresAt: Date.parse(response.data.expires_at) };
    seen.push(current.token);
    options.seen?.push(current.token);
    return current.token;
  };
  const token = (): Promise<string> => {
    if (current && current.expiresAt - now() > REFRESH_MARGIN_MS) return Promise.resolve(current.token);
    pending ??= create().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  await token();

  const auth = (async () => ({ type: "token", tokenType: "installation", token: await token() })) as TokenAuthHook;
  auth.hook = async (request, route, parameters) => {
    const endpoint = request.endpoint.merge(route, parameters);
    endpoint.headers.authorization = `token ${await token()}`;
    return request(endpoint);
  };
  // Same class, so the same base URL (GHE_HOST), plugins and logger; only the auth differs.
  // Client-side throttling (one write a second, one notification every three) is GitHub.com's
  // etiquette; an operator may turn it off for a GitHub Enterprise Server without those limits.
  // Retries on (a story outlives a transient 502), whatever the App's class defaults to; the
  // outbox turns them off, as it retries itself (honouring retry-after, across restarts).
  // The base URL is copied too, for an App octokit that got it as an instance option.
  type Options = { authStrategy: () => TokenAuthHook; baseUrl: string; throttle: { enabled: boolean }; retry: { enabled: boolean } };
  const OctokitClass = appOctokit.constructor as new (options: Options) => AppOctokit;
  const baseUrl = appOctokit.request.endpoint.DEFAULTS.baseUrl;
  const octokit = new OctokitClass({
    authStrategy: () => auth,
    baseUrl,
    throttle: { enabled: options.throttle !== false },
    retry: { enabled: options.retry !== false },
  });
  return { token, tokensSeen: () => seen, octokit };
}
