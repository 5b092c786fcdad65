import { bodyObject, HttpError, intParam, paginate, requireRepo, type RouteRequest } from "../http.js";
import { reviewCommentJson, reviewJson } from "../review-shapes.js";
import { nodeId, timestamp, type PullRecord, type RepoRecord } from "../state.js";
import type { Route } from "./types.js";

function requirePull(request: RouteRequest, repo: RepoRecord): PullRecord {
  const pull = request.ctx.state.pull(repo, intParam(request, "pull_number"));
  if (!pull) throw new HttpError(404, "Not Found");
  return pull;
}

/** Reviews and review comments: list a pull request's reviews, a review's comments, and reply in a comment's thread. */
export const reviewRoutes: Route[] = [
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const pull = requirePull(request, repo);
      const reviews = request.ctx.state.reviews.filter((review) => review.repo === repo.fullName && review.pullNumber === pull.number);
      const page = paginate(request, reviews);
      return { status: 200, json: page.items.map((review) => reviewJson(request.ctx.urls, review)), headers: page.headers };
    },
  },
  {
    method: "GET",
    template: "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments",
    auth: "installation",
    handle: (request) => {
      const repo = requireRepo(request);
      const pull = requirePull(request, repo);
      const reviewId = intParam(request, "review_id");
      if (!request.ctx.state.reviews.some((review) => review.repo === repo.fullName && review.pullNumber === pull.number && review.id === reviewId)) {
        throw new HttpError(404, "Not Found");
      }
      const comments = request.ctx.state.reviewComments.filter((comment) => comment.repo === repo.fullName && comment.reviewId === reviewId);
      const page = paginate(request, comments);
      return { status: 200, json: page.items.map((comment) => reviewCommentJson(request.ctx.urls, comment)), headers: page.headers };
    },
  },
  {
    method: "POST",
    template: "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
    auth: "installation",
    handle: (request) => {
      const { ctx } = request;
      const repo = requireRepo(request);
      const pull = requirePull(request, repo);
      const id = intParam(request, "comment_id");
      const target = ctx.state.reviewComments.find((comment) => comment.repo === repo.fullName && comment.pullNumber === pull.number && comment.id === id);
      if (!target) throw new HttpError(404, "Not Found");
      // GitHub threads replies under the comment that starts the thread; a reply to a reply is refused.
      if (target.inReplyTo !== undefined)
        throw new HttpError(422, "Validation Failed", [
          { resource: "PullRequestReviewComment", code: "custom", message: "Replies to replies are not supported." },
        ]);
      const body = String(bodyObject(request).body ?? "");
      if (body.length > 65_536)
        throw new HttpError(
          422,
          "Validation Failed",
          [{ resource: "PullRequestReviewComment", field: "body", code: "custom", message: "Body is too long (maximum is 65536 characters)" }],
          true,
        );
      const replyId = ctx.state.nextId();
      const reply = {
        repo: repo.fullName,
        pullNumber: pull.number,
        id: replyId,
        nodeId: nodeId("PRRC", replyId),
        reviewId: ctx.state.nextId(),
        user: ctx.botLogin,
        body,
        path: target.path,
        line: target.line,
        originalLine: target.originalLine,
        commitId: target.commitId,
        inReplyTo: target.id,
        createdAt: timestamp(),
      };
      ctx.state.reviewComments.push(reply);
      return { status: 201, json: reviewCommentJson(ctx.urls, reply) };
    },
  },
];
