import { bodyObject, HttpError, intParam, paginate, requireRepo, type FakeContext, type RouteRequest } from "../http.js";
import { commentJson, issueJson, reactionJson } from "../shapes.js";
import { nodeId, timestamp, type CommentRecord, type IssueRecord, type LabelRecord, type RepoRecord } from "../state.js";
import type { Route } from "./types.js";

/** The label records of an issue's label names. */
export function labelsOf(ctx: FakeContext, repo: RepoRecord, issue: IssueRecord): LabelRecord[] {
  return issue.labels.map((name) => ctx.state.ensureLabel(repo, name));
}

/** An issue (or a pull request's issue) as GitHub returns it. */
export function issueResponse(ctx: FakeContext, repo: RepoRecord, issue: IssueRecord): Record<string, unknown> {
  const count = ctx.state.comments.filter((comment) => comment.repo === repo.fullName && comment.issueNumber === issue.number).length;
  return issueJson(ctx.urls, issue, labelsOf(ctx, repo, issue), count);
}

/** The issue a route names; 404 like GitHub when there is none. */
export function requireIssue(request: RouteRequest, repo: RepoRecord): IssueRecord {
  const issue = request.ctx.state.issue(repo, intParam(request, "issue_number"));
  if (!issue) throw new HttpError(404, "Not Found");
  return issue;
}

function requireComment(request: RouteRequest, repo: RepoRecord): CommentRecord {
  const id = intParam(request, "comment_id");
  const comment = request.ctx.state.comments.find((candidate) => candidate.repo === repo.fullName && candidate.id === id);
  if (!comment) throw new HttpError(404, "Not Found");
  return comment;
}

/** Adds a comment as `user` (the App's bot when it comes through the API). */
export function addComment(ctx: FakeContext, repo: RepoRecord, issueNumber: number, body: string, user: string): CommentRecord {
  const id = ctx.state.nextId();
  const now = timestamp();
  const comment: CommentRecord = {
    repo: repo.fullName,
    issueNumber,
    id,
    nodeId: nodeId("IC", id),
    body,
    user,
    createdAt: now,
    updatedAt: now,
    history: [body],
  };
  ctx.state.comments.push(comment);
  return comment;
}

/** Issue, comment and reaction routes. */
export const issueRoutes: Route[] = [
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/issues/{issue_number}",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      return { status: 200, json: issueResponse(request.ctx, repo, requireIssue(request, repo)) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const issue = requireIssue(request, repo);
      const all = request.ctx.state.comments.filter((comment) => comment.repo === repo.fullName && comment.issueNumber === issue.number);
      const page = paginate(request, all);
      return { status: 200, json: page.items.map((comment) => commentJson(request.ctx.urls, comment)), headers: page.headers };
    },
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const issue = requireIssue(request, repo);
      const body = String(bodyObject(request).body ?? "");
      if (body.length > 65536)
        throw new HttpError(
          422,
          "Validation Failed",
          [{ resource: "IssueComment", field: "body", code: "custom", message: "body is too long (maximum is 65536 characters)" }],
          true,
        );
      const comment = addComment(request.ctx, repo, issue.number, body, request.ctx.botLogin);
      return { status: 201, json: commentJson(request.ctx.urls, comment) };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/issues/comments/{comment_id}",
    auth: "installation",
    handle: (request) => ({ status: 200, json: commentJson(request.ctx.urls, requireComment(request, requireRepo(request))) }),
  },
  {
    method: "PATCH",
    template: "/repos/{owner}/{repo}/issues/comments/{comment_id}",
    auth: "installation",
    handle: (request) => {
      const comment = requireComment(request, requireRepo(request));
      const body = String(bodyObject(request).body ?? "");
      if (body.length > 65536)
        throw new HttpError(
          422,
          "Validation Failed",
          [{ resource: "IssueComment", field: "body", code: "custom", message: "body is too long (maximum is 65536 characters)" }],
          true,
        );
      comment.body = body;
      comment.updatedAt = timestamp();
      comment.history.push(body);
      return { status: 200, json: commentJson(request.ctx.urls, comment) };
    },
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/issues/{issue_number}/reactions",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const issue = requireIssue(request, repo);
      const content = String(bodyObject(request).content);
      const existing = ctx.state.reactions.find(
        (reaction) =>
          reaction.repo === repo.fullName && reaction.issueNumber === issue.number && reaction.content === content && reaction.user === ctx.botLogin,
      );
      if (existing) return { status: 200, json: reactionJson(ctx.urls, existing) };
      const reaction = { repo: repo.fullName, issueNumber: issue.number, id: ctx.state.nextId(), content, user: ctx.botLogin, createdAt: timestamp() };
      ctx.state.reactions.push(reaction);
      return { status: 201, json: reactionJson(ctx.urls, reaction) };
    },
  },
];
