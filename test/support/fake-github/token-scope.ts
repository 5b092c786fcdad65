/**
 * What an installation token may do, as GitHub decides it: the repositories it was minted for
 * (`repository_ids`) and the permissions it holds, each no more than the installation's.
 */
import type { IssuedToken } from "./auth.js";
import { HttpError } from "./http.js";
import type { RepoRecord } from "./state.js";

const LEVEL: Record<string, number> = { read: 1, write: 2, admin: 3 };

/** Checks a token request against the installation; throws GitHub's 422 when it asks too much. */
export function checkTokenRequest(
  asked: { repository_ids?: unknown; permissions?: unknown },
  repos: readonly RepoRecord[],
  granted: Record<string, string>,
): void {
  if (asked.repository_ids !== undefined) {
    const ids = asked.repository_ids;
    if (!Array.isArray(ids) || ids.some((id) => !repos.some((repo) => repo.id === id))) {
      throw new HttpError(422, "There is at least one repository that does not exist or is not accessible to the parent installation.");
    }
  }
  if (asked.permissions !== undefined) {
    for (const [name, level] of Object.entries(asked.permissions as Record<string, string>)) {
      if ((LEVEL[level] ?? 99) > (LEVEL[granted[name] ?? ""] ?? 0)) throw new HttpError(422, "The permissions requested are not granted to this installation.");
    }
  }
}

/** The permission a REST route on a repository needs, from its path and method. */
export function permissionFor(method: string, path: string): [string, "read" | "write"] | undefined {
  const segment = /^\/repos\/[^/]+\/[^/]+\/([^/]+)/.exec(path)?.[1];
  const level = method === "GET" || method === "HEAD" ? "read" : "write";
  if (segment === "check-runs" || segment === "check-suites" || segment === "commits") return ["checks", level];
  if (segment === "issues" || segment === "labels") return ["issues", level];
  if (segment === "pulls") return ["pull_requests", level];
  if (segment === "contents" || segment === "git") return ["contents", level];
  if (segment === "actions") return ["actions", level];
  return undefined;
}

/**
 * Refuses a token used outside its grant: another repository (404, as GitHub answers) or a
 * permission it was not given (403 "Resource not accessible by integration").
 */
export function checkTokenUse(token: IssuedToken, repo: RepoRecord | undefined, needs: [string, "read" | "write"] | undefined): void {
  if (repo && token.repositoryIds && !token.repositoryIds.includes(repo.id)) {
    // A correct App never does this: marked unexpected, so the test fails.
    throw new HttpError(404, `Not Found (a token minted for repositories ${token.repositoryIds.join(", ")} used on ${repo.fullName})`, undefined, true);
  }
  if (needs) {
    const [name, level] = needs;
    if ((LEVEL[token.permissions[name] ?? ""] ?? 0) < (LEVEL[level] ?? 0)) {
      throw new HttpError(403, `Resource not accessible by integration (the token has no ${name}: ${level})`, undefined, true);
    }
  }
}
