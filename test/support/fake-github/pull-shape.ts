import { labelJson, repoJson, userJson, type Urls } from "./shapes.js";
import type { LabelRecord, PullRecord, RepoRecord } from "./state.js";

/** GitHub's pull request object; the shas are read from the bare repository by the caller. */
export function pullJson(
  urls: Urls,
  repo: RepoRecord,
  pull: PullRecord,
  shas: { head: string | null; base: string | null },
  labels: LabelRecord[],
): Record<string, unknown> {
  const api = `${urls.api}/repos/${pull.repo}/pulls/${pull.number}`;
  const side = (ref: string, sha: string | null): Record<string, unknown> => ({
    label: `${repo.owner}:${ref}`,
    ref,
    sha,
    user: userJson(urls, repo.owner),
    repo: repoJson(urls, repo),
  });
  const html = `${urls.web}/${pull.repo}/pull/${pull.number}`;
  const issueApi = `${urls.api}/repos/${pull.repo}/issues/${pull.number}`;
  return {
    id: pull.id,
    node_id: pull.nodeId,
    url: api,
    html_url: html,
    issue_url: issueApi,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    commits_url: `${api}/commits`,
    comments_url: `${issueApi}/comments`,
    review_comments_url: `${api}/comments`,
    review_comment_url: `${urls.api}/repos/${pull.repo}/pulls/comments{/number}`,
    statuses_url: `${urls.api}/repos/${pull.repo}/statuses/${shas.head ?? ""}`,
    _links: {
      self: { href: api },
      html: { href: html },
      issue: { href: issueApi },
      comments: { href: `${issueApi}/comments` },
      review_comments: { href: `${api}/comments` },
      review_comment: { href: `${urls.api}/repos/${pull.repo}/pulls/comments{/number}` },
      commits: { href: `${api}/commits` },
      statuses: { href: `${urls.api}/repos/${pull.repo}/statuses/${shas.head ?? ""}` },
    },
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    milestone: null,
    auto_merge: null,
    merge_commit_sha: null,
    merged_by: null,
    mergeable_state: "unknown",
    maintainer_can_modify: false,
    comments: 0,
    review_comments: 0,
    commits: 0,
    additions: 0,
    deletions: 0,
    changed_files: 0,
    number: pull.number,
    state: pull.state,
    locked: false,
    title: pull.title,
    body: pull.body,
    user: userJson(urls, pull.user),
    labels: labels.map((label) => labelJson(urls, label)),
    draft: pull.draft,
    head: side(pull.headRef, shas.head),
    base: side(pull.baseRef, shas.base),
    merged: false,
    mergeable: null,
    merged_at: null,
    closed_at: null,
    author_association: "NONE",
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
  };
}
