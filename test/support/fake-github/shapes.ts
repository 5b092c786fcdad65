import { createHash } from "node:crypto";
import type { CheckRunRecord, CommentRecord, IssueRecord, LabelRecord, PullRecord, ReactionRecord, RepoRecord } from "./state.js";
import { nodeId } from "./state.js";

/** Where the fake lives: `web` for html_url and git, `api` (`web` + `/api/v3`) for url fields. */
export interface Urls {
  web: string;
  api: string;
}

/** A stable numeric id for a login, so the same user always has the same id. */
export function userId(login: string): number {
  return 10_000 + (createHash("sha256").update(login.toLowerCase()).digest().readUInt32BE(0) % 90_000_000);
}

/** GitHub's user object; logins ending in `[bot]` are bots. */
export function userJson(urls: Urls, login: string): Record<string, unknown> {
  const id = userId(login);
  return {
    login,
    id,
    node_id: nodeId(login.endsWith("[bot]") ? "BOT" : "U", id),
    avatar_url: `${urls.web}/avatars/u/${id}`,
    gravatar_id: "",
    url: `${urls.api}/users/${encodeURIComponent(login)}`,
    html_url: `${urls.web}/${encodeURIComponent(login)}`,
    type: login.endsWith("[bot]") ? "Bot" : "User",
    site_admin: false,
  };
}

/** GitHub's repository object. */
export function repoJson(urls: Urls, repo: RepoRecord): Record<string, unknown> {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: repo.fullName,
    owner: userJson(urls, repo.owner),
    private: false,
    html_url: `${urls.web}/${repo.fullName}`,
    description: null,
    fork: false,
    url: api,
    clone_url: `${urls.web}/${repo.fullName}.git`,
    git_url: `${urls.web.replace(/^https?:/, "git:")}/${repo.fullName}.git`,
    ssh_url: `git@${new URL(urls.web).host}:${repo.fullName}.git`,
    issues_url: `${api}/issues{/number}`,
    pulls_url: `${api}/pulls{/number}`,
    labels_url: `${api}/labels{/name}`,
    default_branch: repo.defaultBranch,
    visibility: "public",
    archived: false,
    disabled: false,
    has_issues: true,
    created_at: repo.createdAt,
    updated_at: repo.createdAt,
    pushed_at: repo.createdAt,
  };
}

export function labelJson(urls: Urls, label: LabelRecord): Record<string, unknown> {
  return {
    id: label.id,
    node_id: label.nodeId,
    url: `${urls.api}/repos/${label.repo}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    default: false,
    description: label.description,
  };
}

/** GitHub's issue object; a pull request's issue carries `pull_request`. */
export function issueJson(urls: Urls, issue: IssueRecord, labels: LabelRecord[], commentCount: number): Record<string, unknown> {
  const api = `${urls.api}/repos/${issue.repo}/issues/${issue.number}`;
  const json: Record<string, unknown> = {
    id: issue.id,
    node_id: issue.nodeId,
    url: api,
    repository_url: `${urls.api}/repos/${issue.repo}`,
    labels_url: `${api}/labels{/name}`,
    comments_url: `${api}/comments`,
    html_url: `${urls.web}/${issue.repo}/${issue.isPull ? "pull" : "issues"}/${issue.number}`,
    number: issue.number,
    state: issue.state,
    title: issue.title,
    body: issue.body,
    user: userJson(urls, issue.user),
    labels: labels.map((label) => labelJson(urls, label)),
    assignee: null,
    assignees: [],
    locked: false,
    comments: commentCount,
    author_association: "OWNER",
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: null,
  };
  if (issue.isPull) {
    json.pull_request = {
      url: `${urls.api}/repos/${issue.repo}/pulls/${issue.number}`,
      html_url: `${urls.web}/${issue.repo}/pull/${issue.number}`,
    };
  }
  return json;
}

export function commentJson(urls: Urls, comment: CommentRecord): Record<string, unknown> {
  return {
    id: comment.id,
    node_id: comment.nodeId,
    url: `${urls.api}/repos/${comment.repo}/issues/comments/${comment.id}`,
    html_url: `${urls.web}/${comment.repo}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `${urls.api}/repos/${comment.repo}/issues/${comment.issueNumber}`,
    body: comment.body,
    user: userJson(urls, comment.user),
    author_association: comment.user.endsWith("[bot]") ? "NONE" : "OWNER",
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
  };
}

export function reactionJson(urls: Urls, reaction: ReactionRecord): Record<string, unknown> {
  return { id: reaction.id, node_id: nodeId("REA", reaction.id), user: userJson(urls, reaction.user), content: reaction.content, created_at: reaction.createdAt };
}

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
  return {
    id: pull.id,
    node_id: pull.nodeId,
    url: api,
    html_url: `${urls.web}/${pull.repo}/pull/${pull.number}`,
    issue_url: `${urls.api}/repos/${pull.repo}/issues/${pull.number}`,
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

export function checkRunJson(urls: Urls, run: CheckRunRecord, app: Record<string, unknown>): Record<string, unknown> {
  return {
    id: run.id,
    node_id: run.nodeId,
    head_sha: run.headSha,
    external_id: run.externalId,
    url: `${urls.api}/repos/${run.repo}/check-runs/${run.id}`,
    html_url: `${urls.web}/${run.repo}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text,
      annotations_count: run.output.annotationsCount,
      annotations_url: `${urls.api}/repos/${run.repo}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: run.id + 1 },
    app,
    pull_requests: [],
  };
}
