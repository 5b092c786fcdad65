import { bodyObject, HttpError, intParam, requireRepo, type FakeContext } from "../http.js";
import { timestamp } from "../state.js";
import { userJson } from "../shapes.js";
import type { Route } from "./types.js";
import { checkTokenRequest } from "../token-scope.js";

/** The permissions the fake's installation holds (those the App's manifest asks for). */
export const INSTALLATION_PERMISSIONS: Record<string, string> = {
  actions: "read",
  checks: "write",
  contents: "write",
  issues: "write",
  metadata: "read",
  pull_requests: "write",
};

function installationJson(ctx: FakeContext): Record<string, unknown> {
  return {
    id: ctx.installationId,
    account: userJson(ctx.urls, ctx.installationAccount),
    app_id: ctx.appId,
    app_slug: ctx.appSlug,
    target_id: 1,
    target_type: "Organization",
    repository_selection: "all",
    access_tokens_url: `${ctx.urls.api}/app/installations/${ctx.installationId}/access_tokens`,
    repositories_url: `${ctx.urls.api}/installation/repositories`,
    html_url: `${ctx.urls.web}/settings/installations/${ctx.installationId}`,
    permissions: INSTALLATION_PERMISSIONS,
    events: ["issues", "issue_comment", "check_run", "check_suite", "pull_request_review"],
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    single_file_name: null,
    suspended_at: null,
    suspended_by: null,
  };
}

function requireInstallation(ctx: FakeContext, id: number): void {
  if (id !== ctx.installationId && !ctx.moreInstallations.includes(id)) throw new HttpError(404, "Not Found");
}

/** App-level routes, all authenticated by the App's JWT. */
export const appRoutes: Route[] = [
  { method: "GET", template: "/app", auth: "app", handle: ({ ctx }) => ({ status: 200, json: ctx.appJson() }) },
  {
    method: "GET",
    template: "/app/installations/{installation_id}",
    auth: "app",
    handle: (request) => {
      requireInstallation(request.ctx, intParam(request, "installation_id"));
      return { status: 200, json: installationJson(request.ctx) };
    },
  },
  {
    method: "POST",
    template: "/app/installations/{installation_id}/access_tokens",
    auth: "app",
    handle: (request) => {
      const { ctx } = request;
      requireInstallation(ctx, intParam(request, "installation_id"));
      const body = bodyObject(request);
      checkTokenRequest(body, ctx.state.repos, INSTALLATION_PERMISSIONS);
      const asked = body.permissions as Record<string, string> | undefined;
      const repositoryIds = body.repository_ids as number[] | undefined;
      const issued = ctx.tokens.issue(intParam(request, "installation_id"), asked ?? INSTALLATION_PERMISSIONS, undefined, repositoryIds);
      return {
        status: 201,
        json: {
          token: issued.token,
          expires_at: timestamp(issued.expiresAt),
          permissions: issued.permissions,
          repository_selection: repositoryIds ? "selected" : "all",
        },
      };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/installation",
    auth: "app",
    handle: (request) => {
      requireRepo(request);
      return { status: 200, json: installationJson(request.ctx) };
    },
  },
];
