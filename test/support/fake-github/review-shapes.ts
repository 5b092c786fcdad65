/** GitHub's JSON for reviews, review comments, other Apps' check suites and annotations (see shapes.ts for the rest). */
import { userJson, type Urls } from "./shapes.js";
import { nodeId, type CheckAnnotationRecord, type CheckSuiteRecord, type RepoRecord, type ReviewCommentRecord, type ReviewRecord } from "./state.js";

function association(login: string): string {
  return login.endsWith("[bot]") ? "NONE" : "OWNER";
}

export function reviewJson(urls: Urls, review: ReviewRecord): Record<string, unknown> {
  const html = `${urls.web}/${review.repo}/pull/${review.pullNumber}#pullrequestreview-${review.id}`;
  const pull = `${urls.api}/repos/${review.repo}/pulls/${review.pullNumber}`;
  return {
    id: review.id,
    node_id: review.nodeId,
    user: userJson(urls, review.user),
    body: review.body,
    state: review.state,
    html_url: html,
    pull_request_url: pull,
    _links: { html: { href: html }, pull_request: { href: pull } },
    submitted_at: review.submittedAt,
    commit_id: review.commitId,
    author_association: association(review.user),
  };
}

export function reviewCommentJson(urls: Urls, comment: ReviewCommentRecord): Record<string, unknown> {
  const url = `${urls.api}/repos/${comment.repo}/pulls/comments/${comment.id}`;
  const html = `${urls.web}/${comment.repo}/pull/${comment.pullNumber}#discussion_r${comment.id}`;
  const pull = `${urls.api}/repos/${comment.repo}/pulls/${comment.pullNumber}`;
  return {
    url,
    id: comment.id,
    node_id: comment.nodeId,
    pull_request_review_id: comment.reviewId,
    diff_hunk: `@@ -1,1 +1,${comment.originalLine} @@`,
    path: comment.path,
    position: comment.line,
    original_position: comment.originalLine,
    commit_id: comment.commitId,
    original_commit_id: comment.commitId,
    ...(comment.inReplyTo !== undefined ? { in_reply_to_id: comment.inReplyTo } : {}),
    user: userJson(urls, comment.user),
    body: comment.body,
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
    html_url: html,
    pull_request_url: pull,
    author_association: association(comment.user),
    _links: { self: { href: url }, html: { href: html }, pull_request: { href: pull } },
    // GitHub's schema has no null line: a comment whose line left the diff (outdated) has none.
    ...(comment.line !== null ? { line: comment.line } : {}),
    original_line: comment.originalLine,
    side: "RIGHT",
  };
}

export function annotationJson(urls: Urls, repo: string, annotation: CheckAnnotationRecord): Record<string, unknown> {
  return {
    path: annotation.path,
    blob_href: `${urls.web}/${repo}/blob/HEAD/${annotation.path}`,
    start_line: annotation.startLine,
    end_line: annotation.endLine,
    start_column: null,
    end_column: null,
    annotation_level: annotation.level,
    title: annotation.title,
    message: annotation.message,
    raw_details: null,
  };
}

/** A check suite as a `check_suite` webhook carries it (`pull_requests` given by the caller). */
export function checkSuiteJson(urls: Urls, repo: RepoRecord, suite: CheckSuiteRecord, pullRequests: unknown[], runsCount: number): Record<string, unknown> {
  return {
    id: suite.id,
    node_id: suite.nodeId ?? nodeId("CS", suite.id),
    head_branch: suite.headBranch,
    head_sha: suite.headSha,
    status: suite.status,
    conclusion: suite.conclusion,
    url: `${urls.api}/repos/${repo.fullName}/check-suites/${suite.id}`,
    before: null,
    after: suite.headSha,
    pull_requests: pullRequests,
    app: suite.app,
    created_at: suite.createdAt,
    updated_at: suite.createdAt,
    latest_check_runs_count: runsCount,
    check_runs_url: `${urls.api}/repos/${repo.fullName}/check-suites/${suite.id}/check-runs`,
    head_commit: { id: suite.headSha, tree_id: suite.headSha, message: "", timestamp: suite.createdAt, author: null, committer: null },
  };
}

/** Another App's object (GitHub Actions, a CI), as check suites and runs embed it. */
export function otherAppJson(urls: Urls, slug: string, id: number, owner: string): Record<string, unknown> {
  return {
    id,
    slug,
    node_id: nodeId("A", id),
    client_id: `Iv1.${id}`,
    name: slug,
    owner: userJson(urls, owner),
    description: "",
    external_url: urls.web,
    html_url: `${urls.web}/apps/${slug}`,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    permissions: { checks: "write", metadata: "read" },
    events: [],
  };
}
