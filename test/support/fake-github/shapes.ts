import { createHash } from "node:crypto";
import type { CheckRunRecord, CommentRecord, IssueRecord, LabelRecord, ReactionRecord, RepoRecord } from "./state.js";
import { nodeId } from "./state.js";

/** Where the fake lives: `web` for html_url and git, `api` (`web` + `/api/v3`) for url fields. */
export interface Urls {
  web: string;
  api: string;
  /**
   * The accounts that are bots (the App's own bot user, and any a test adds). An account's type
   * is a property of the account, as on GitHub, not something read off its login.
   */
  bots?: ReadonlySet<string>;
}

/** A stable numeric id for a login, so the same user always has the same id. */
export function userId(login: string): number {
  return 10_000 + (createHash("sha256").update(login.toLowerCase()).digest().readUInt32BE(0) % 90_000_000);
}

/** GitHub's user object; the accounts in `urls.bots` are bots, every other one a user. */
export function userJson(urls: Urls, login: string): Record<string, unknown> {
  const id = userId(login);
  const bot = urls.bots?.has(login) ?? false;
  const api = `${urls.api}/users/${encodeURIComponent(login)}`;
  return {
    login,
    id,
    node_id: nodeId(bot ? "BOT" : "U", id),
    avatar_url: `${urls.web}/avatars/u/${id}`,
    gravatar_id: "",
    url: api,
    html_url: `${urls.web}/${encodeURIComponent(login)}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: bot ? "Bot" : "User",
    site_admin: false,
  };
}

/** The hypermedia URL fields of a repository object, relative to its API URL (as GitHub lists them). */
const REPO_URL_FIELDS: Record<string, string> = {
  archive_url: "/{archive_format}{/ref}",
  assignees_url: "/assignees{/user}",
  blobs_url: "/git/blobs{/sha}",
  branches_url: "/branches{/branch}",
  collaborators_url: "/collaborators{/collaborator}",
  comments_url: "/comments{/number}",
  commits_url: "/commits{/sha}",
  compare_url: "/compare/{base}...{head}",
  contents_url: "/contents/{+path}",
  contributors_url: "/contributors",
  deployments_url: "/deployments",
  downloads_url: "/downloads",
  events_url: "/events",
  forks_url: "/forks",
  git_commits_url: "/git/commits{/sha}",
  git_refs_url: "/git/refs{/sha}",
  git_tags_url: "/git/tags{/sha}",
  hooks_url: "/hooks",
  issue_comment_url: "/issues/comments{/number}",
  issue_events_url: "/issues/events{/number}",
  issues_url: "/issues{/number}",
  keys_url: "/keys{/key_id}",
  labels_url: "/labels{/name}",
  languages_url: "/languages",
  merges_url: "/merges",
  milestones_url: "/milestones{/number}",
  notifications_url: "/notifications{?since,all,participating}",
  pulls_url: "/pulls{/number}",
  releases_url: "/releases{/id}",
  stargazers_url: "/stargazers",
  statuses_url: "/statuses/{sha}",
  subscribers_url: "/subscribers",
  subscription_url: "/subscription",
  tags_url: "/tags",
  teams_url: "/teams",
  trees_url: "/git/trees{/sha}",
};

/** GitHub's repository object. */
export function repoJson(urls: Urls, repo: RepoRecord): Record<string, unknown> {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    ...Object.fromEntries(Object.entries(REPO_URL_FIELDS).map(([field, suffix]) => [field, `${api}${suffix}`])),
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
    svn_url: `${urls.web}/${repo.fullName}`,
    homepage: null,
    language: null,
    mirror_url: null,
    license: null,
    size: 0,
    forks: 0,
    forks_count: 0,
    open_issues: 0,
    open_issues_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    network_count: 0,
    subscribers_count: 0,
    default_branch: repo.defaultBranch,
    visibility: "public",
    archived: false,
    disabled: false,
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    has_downloads: true,
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
    events_url: `${api}/events`,
    html_url: `${urls.web}/${issue.repo}/${issue.isPull ? "pull" : "issues"}/${issue.number}`,
    milestone: null,
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
    const html = `${urls.web}/${issue.repo}/pull/${issue.number}`;
    json.pull_request = {
      url: `${urls.api}/repos/${issue.repo}/pulls/${issue.number}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      merged_at: null,
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
  return {
    id: reaction.id,
    node_id: nodeId("REA", reaction.id),
    user: userJson(urls, reaction.user),
    content: reaction.content,
    created_at: reaction.createdAt,
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
    check_suite: { id: run.suiteId ?? run.id + 1 },
    app: run.app ?? app,
    pull_requests: [],
  };
}
