/** The story's pull request on GitHub: found by its branch, opened as a draft (marked ready by `markReadyForReview` in the room below). */
import { renderPullBody, renderPullTitle } from "../report/render/index.js";
import type { AppOctokit } from "./installation.js";

/** The story's open pull request as the runner needs it. */
export interface OpenStoryPull {
  pullNumber: number;
  pullUrl: string;
  /** GraphQL id of the pull request (to mark it ready for review). */
  pullNodeId: string;
  /** True when this call opened the pull request (the story's first start). */
  opened: boolean;
}

export interface DraftPullArgs {
  owner: string;
  repo: string;
  /** The story branch, already pushed. */
  branch: string;
  defaultBranch: string;
  issue: { number: number; title: string };
  /** Known to have no pull request in any state (the caller just asked): nothing is looked for. */
  noPullYet?: boolean;
}

/**
 * The open pull request of the story branch, or a new draft one ("Story #N: <title>", body
 * `Closes #N`) when there is none: a later start (retry, resumption) reuses the first one's.
 * With `noPullYet` the list is not asked (the runner's look for a completed story just said
 * the branch has none); should one have appeared meanwhile, GitHub refuses the second.
 */
export async function ensureDraftPull(octokit: AppOctokit, args: DraftPullArgs): Promise<OpenStoryPull> {
  const { owner, repo, branch } = args;
  if (args.noPullYet !== true) {
    const existing = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open" });
    const found = existing.data.find((pull) => pull.head.ref === branch);
    if (found) return { pullNumber: found.number, pullUrl: found.html_url, pullNodeId: found.node_id, opened: false };
  }
  const created = await octokit.rest.pulls.create({
    owner,
    repo,
    title: renderPullTitle(args.issue),
    head: branch,
    base: args.defaultBranch,
    body: renderPullBody(args.issue.number),
    draft: true,
  });
  const pull = created.data;
  return { pullNumber: pull.number, pullUrl: pull.html_url, pullNodeId: pull.node_id, opened: true };
}
