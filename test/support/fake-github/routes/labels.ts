import { bodyObject, HttpError, requireRepo } from "../http.js";
import { labelJson } from "../shapes.js";
import { nodeId, timestamp } from "../state.js";
import { labelsOf, requireIssue } from "./issues.js";
import type { Route } from "./types.js";

/** Label routes: repository labels and the labels on an issue or pull request. */
export const labelRoutes: Route[] = [
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/labels",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const body = bodyObject(request);
      const name = String(body.name);
      if (ctx.state.label(repo, name)) {
        throw new HttpError(422, "Validation Failed", [{ resource: "Label", code: "already_exists", field: "name" }]);
      }
      const id = ctx.state.nextId();
      const color = typeof body.color === "string" ? body.color.replace(/^#/, "") : "ededed";
      const label = {
        repo: repo.fullName,
        id,
        nodeId: nodeId("LA", id),
        name,
        color,
        description: typeof body.description === "string" ? body.description : null,
      };
      ctx.state.labels.push(label);
      return { status: 201, json: labelJson(ctx.urls, label) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/labels/{name}",
    auth: "installation",
    handle: (request) => {
      const label = request.ctx.state.label(requireRepo(request), request.params.name ?? "");
      if (!label) throw new HttpError(404, "Not Found");
      return { status: 200, json: labelJson(request.ctx.urls, label) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/labels",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const labels = labelsOf(request.ctx, repo, requireIssue(request, repo));
      return { status: 200, json: labels.map((label) => labelJson(request.ctx.urls, label)) };
    },
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/labels",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const issue = requireIssue(request, repo);
      const asked = (bodyObject(request).labels as unknown[] | undefined) ?? [];
      for (const entry of asked) {
        const name = typeof entry === "string" ? entry : String((entry as { name?: unknown }).name);
        // Adding a label that does not exist yet creates it, as on GitHub.
        const label = ctx.state.ensureLabel(repo, name);
        if (!issue.labels.some((existing) => existing.toLowerCase() === label.name.toLowerCase())) issue.labels.push(label.name);
      }
      issue.updatedAt = timestamp();
      return { status: 200, json: labelsOf(ctx, repo, issue).map((label) => labelJson(ctx.urls, label)) };
    },
  },
  {
    method: "DELETE",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const issue = requireIssue(request, repo);
      const name = (request.params.name ?? "").toLowerCase();
      const index = issue.labels.findIndex((existing) => existing.toLowerCase() === name);
      if (index < 0) throw new HttpError(404, "Label does not exist");
      issue.labels.splice(index, 1);
      issue.updatedAt = timestamp();
      return { status: 200, json: labelsOf(ctx, repo, issue).map((label) => labelJson(ctx.urls, label)) };
    },
  },
];
