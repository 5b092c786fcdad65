import { storyBranch } from "../github/index.js";
import { git, gitResult, HARNESS_IDENTITY } from "../workspace/index.js";
import type { AppOctokit } from "./token.js";

/** The story's draft pull request and the branch it heads. */
export interface StoryPull {
  branch: string;
  pullNumber: number;
  pullUrl: string;
  /** GraphQL id of the pull request (to mark it ready for review). */
  pullNodeId: string;
  headSha: string;
  /** True when this call opened the pull request (the story's first start). */
  opened: boolean;
}

export interface StartStoryArgs {
  octokit: AppOctokit;
  /** The repository cache, fetched just before. */
  repoDir: string;
  owner: string;
  repo: string;
  defaultBranch: string;
  issue: { number: number; title: string };
  authEnv: Record<string, string>;
}

/** Title of a story's pull request. */
export function pullTitle(issue: { number: number; title: string }): string {
  return `Story #${issue.number}: ${issue.title}`;
}

/**
 * Makes sure the story has its branch and draft pull request. On the first start: an empty
 * start commit on top of the default branch is pushed as `harness/story-<N>` and a draft pull
 * request "Story #N: <title>" (body `Closes #N`) is opened (the runner then announces it on
 * the issue, through the outbox). A later start (retry, resumption) reuses both.
 */
export async function ensureStoryPull(args: StartStoryArgs): Promise<StoryPull> {
  const branch = storyBranch(args.issue.number);
  const remoteRef = `refs/remotes/origin/${branch}`;
  let headSha = await resolveRef(args.repoDir, remoteRef);
  if (!headSha) {
    const base = `refs/remotes/origin/${args.defaultBranch}`;
    headSha = await git(["commit-tree", `${base}^{tree}`, "-p", base, "-m", `${pullTitle(args.issue)}\n\nStarted by story-harness.`], {
      cwd: args.repoDir,
      env: HARNESS_IDENTITY,
    });
    await git(["push", "--quiet", "origin", `${headSha}:refs/heads/${branch}`], { cwd: args.repoDir, env: args.authEnv, timeoutMs: 600_000 });
    await git(["update-ref", remoteRef, headSha], { cwd: args.repoDir });
  }
  const existing = await args.octokit.rest.pulls.list({ owner: args.owner, repo: args.repo, head: `${args.owner}:${branch}`, state: "open" });
  const found = existing.data.find((pull) => pull.head.ref === branch);
  if (found) return { branch, pullNumber: found.number, pullUrl: found.html_url, pullNodeId: found.node_id, headSha, opened: false };

  const created = await args.octokit.rest.pulls.create({
    owner: args.owner,
    repo: args.repo,
    title: pullTitle(args.issue),
    head: branch,
    base: args.defaultBranch,
    body: `Closes #${args.issue.number}\n\nThis pull request is worked on by story-harness; its checks and the status comment below show the progress.`,
    draft: true,
  });
  const pull = created.data;
  return { branch, pullNumber: pull.number, pullUrl: pull.html_url, pullNodeId: pull.node_id, headSha, opened: true };
}

/** The commit a ref points at, or undefined when it does not exist. */
export async function resolveRef(repoDir: string, ref: string): Promise<string | undefined> {
  const result = await gitResult(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repoDir, readOnly: true });
  return result.exitCode === 0 ? result.stdout?.toString().trim() : undefined;
}

/** Pushes the story branch's new tip (a fast-forward of what the remote has). */
export async function pushStoryBranch(args: { repoDir: string; branch: string; sha: string; authEnv: Record<string, string> }): Promise<void> {
  await git(["push", "--quiet", "origin", `${args.sha}:refs/heads/${args.branch}`], { cwd: args.repoDir, env: args.authEnv, timeoutMs: 600_000 });
  await git(["update-ref", `refs/remotes/origin/${args.branch}`, args.sha], { cwd: args.repoDir });
}

/** Marks a draft pull request ready for review (REST cannot; GraphQL can). */
export async function markReadyForReview(octokit: AppOctokit, pullNodeId: string): Promise<void> {
  await octokit.graphql(
    `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
    { id: pullNodeId },
  );
}
