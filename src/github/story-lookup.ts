/** Finding a story from its pull request and the pull request from its story. */
import type { ProbotOctokit } from "probot";

const BRANCH_PATTERN = /^harness\/story-([1-9][0-9]{0,9})$/;

/** The branch a story's work lives on. */
export function storyBranch(issueNumber: number): string {
  return `harness/story-${issueNumber}`;
}

/** The story issue number of a `harness/story-<N>` branch, or undefined. */
export function storyIssueFromBranch(branch: string): number | undefined {
  const match = BRANCH_PATTERN.exec(branch);
  return match?.[1] ? Number(match[1]) : undefined;
}

/** The check runs' `external_id`, which names the story so a Retry press finds it without a lookup. */
export function storyExternalId(issueNumber: number): string {
  return `story-${issueNumber}`;
}

/** The story issue number in a check run's `external_id`, or undefined. */
export function storyIssueFromExternalId(externalId: string | null | undefined): number | undefined {
  const match = /^story-([1-9][0-9]{0,9})$/.exec(externalId ?? "");
  return match?.[1] ? Number(match[1]) : undefined;
}

export interface StoryPullRequest {
  number: number;
  url: string;
  state: string;
  draft: boolean;
  merged: boolean;
}

/** The pull request of a story's branch in the same repository, newest first, or undefined. */
export async function findStoryPullRequest(octokit: ProbotOctokit, owner: string, repo: string, issueNumber: number): Promise<StoryPullRequest | undefined> {
  const { data } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${storyBranch(issueNumber)}`, state: "all", per_page: 10 });
  const pull = data[0];
  if (!pull) return undefined;
  return { number: pull.number, url: pull.html_url, state: pull.state, draft: pull.draft === true, merged: pull.merged_at !== null };
}

/** True when a story's pull request shows it completed: merged, or open and ready for review. */
export function isCompletedStory(pull: StoryPullRequest): boolean {
  return pull.merged || (pull.state === "open" && !pull.draft);
}
